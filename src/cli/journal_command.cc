#include "cli/journal_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "server/journal_summary.h"

namespace anchorage::cli {

int journal_command(const std::vector<std::string_view>& args) {
  if (args.size() != 1 || args[0] == "--help" || args[0] == "-h") {
    std::fprintf(args.size() == 1 ? stdout : stderr,
                 "usage: anchorage journal FILE\n"
                 "Sums a request journal (anchorage serve --journal FILE) up per session.\n");
    return args.size() == 1 ? 0 : 2;
  }
  std::ifstream in{std::string(args[0]), std::ios::binary};
  if (!in) {
    std::fprintf(stderr, "anchorage journal: cannot read the file\n");
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const server::JournalSummary s = server::summarize_journal(text.str());
  std::fputs(server::format_journal_summary(s).c_str(), stdout);
  return 0;
}

}  // namespace anchorage::cli

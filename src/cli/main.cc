// anchorage: the command line. A file per subcommand; this one only dispatches.
#include <cstdio>
#include <string_view>
#include <vector>

#include "cli/bench_command.h"
#include "cli/gguf_random_command.h"
#include "cli/inspect_command.h"
#include "cli/journal_command.h"
#include "cli/run_command.h"
#include "cli/serve_command.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: anchorage <command> [flags]\n\n"
               "commands:\n"
               "  run          one generation (anchorage run --help)\n"
               "  serve        the OpenAI-compatible HTTP server (anchorage serve --help)\n"
               "  inspect      what a GGUF model file holds and costs (anchorage inspect --help)\n"
               "  gguf-random  write a random model as a GGUF file (anchorage gguf-random --help)\n"
               "  journal      a request journal summed up per session (anchorage journal --help)\n"
               "  bench        benchmarks over HTTP: anchorage bench replay (--help)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string_view cmd = argv[1];
  std::vector<std::string_view> rest(argv + 2, argv + argc);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    print_usage(stdout);
    return 0;
  }
  if (cmd == "run") return anchorage::cli::run_command(rest);
  if (cmd == "serve") return anchorage::cli::serve_command(rest);
  if (cmd == "inspect") return anchorage::cli::inspect_command(rest);
  if (cmd == "journal") return anchorage::cli::journal_command(rest);
  if (cmd == "bench") return anchorage::cli::bench_command(rest);
  if (cmd == "gguf-random") return anchorage::cli::gguf_random_command(rest);
  std::fprintf(stderr, "anchorage: unknown command (see anchorage --help)\n");
  return 2;
}

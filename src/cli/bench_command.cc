#include "cli/bench_command.h"

#include <cstdio>

#ifdef ANCHORAGE_HAVE_REPLAY
#include "replay/replay.h"
#endif

namespace anchorage::cli {

int bench_command(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fprintf(args.empty() ? stderr : stdout,
                 "usage: anchorage bench replay [flags] (anchorage bench replay --help)\n");
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "replay") {
    std::fprintf(stderr, "anchorage bench: unknown benchmark (replay is the one)\n");
    return 2;
  }
#ifdef ANCHORAGE_HAVE_REPLAY
  const std::vector<std::string_view> rest(args.begin() + 1, args.end());
  for (std::string_view a : rest) {
    if (a == "--help" || a == "-h") {
      std::fputs(bench::kReplayUsage, stdout);
      return 0;
    }
  }
  bench::ReplayOptions o;
  // The tokenizer `anchorage serve` uses, unless --tokenizer-dir says otherwise.
  o.tokenizer_json = std::string(ANCHORAGE_DEFAULT_TOKENIZER_DIR) + "/tokenizer.json";
  if (!bench::parse_replay_args(rest, &o)) {
    std::fputs(bench::kReplayUsage, stderr);
    return 2;
  }
  return bench::run_replay(o);
#else
  std::fprintf(stderr, "anchorage bench: built without the benchmarks (ANCHORAGE_BUILD_BENCH)\n");
  return 2;
#endif
}

}  // namespace anchorage::cli

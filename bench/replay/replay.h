// The replay benchmark (`anchorage bench replay`, docs/performance.md "Replay"): agent-shaped
// conversations played over HTTP against in-process servers, one server per scenario and
// cache configuration, with the client sending back the server's own answers as the modelled
// client transforms them. Per request a JSON line (counts, hashes, times; never text); on
// stdout one JSON document of per-scenario, per-configuration figures; an SVG plot of TTFT per
// request.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/log.h"

namespace anchorage::bench {

struct ReplayOptions {
  std::vector<std::string> scenarios = {"opencode", "two-sessions", "openwebui", "fleet",
                                        "restart"};
  std::vector<std::string> configs = {"exact", "rows", "end_off", "grid_only", "no_cache"};
  std::string preset = "small";
  bool quick = false;  // few, short turns (the ctest)
  bool check = false;  // exit 1 when a check fails (structure, fewer tokens, equal answers)
  std::string out_dir = "build/replay";
  std::string tokenizer_json;
  int threads = 0;  // engine threads; 0: all
  uint64_t seed = 1;
  int64_t max_tokens = 0;  // 0: 48, or 12 with --quick
  int64_t capacity = 0;    // 0: 49,152, or 16,384 with --quick
  // The servers' log (ids, counts and hashes only); debug names why a resume fell short.
  core::LogLevel log_level = core::LogLevel::kWarn;
};

// Parses `bench replay` flags (argv without the command words). Returns false on a bad flag.
bool parse_replay_args(const std::vector<std::string_view>& args, ReplayOptions* out);

// Runs every scenario under every configuration; 0 on success (and, with check, every check
// passed), 1 otherwise.
int run_replay(const ReplayOptions& options);

extern const char kReplayUsage[];

}  // namespace anchorage::bench

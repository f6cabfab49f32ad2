// `anchorage bench <name>`: the benchmarks that drive the server over HTTP like a client
// (bench/replay/, docs/performance.md "Replay"). Linked in when the build has the benchmarks
// (ANCHORAGE_BUILD_BENCH, on by default).
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

int bench_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli

// `anchorage inspect FILE.gguf`: prints what a GGUF model file holds and what serving it costs
// — format version, every metadata key (long strings and arrays summarised), the architecture
// and hyper-parameters as the loader reads them, every tensor's name, shape, type and bytes,
// and, after loading the model, the engine's cost(): state bytes per sequence and KV bytes per
// token. Exit codes: 0 ok, 1 a file or load error, 2 bad usage.
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

// args: everything after `inspect`.
int inspect_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli

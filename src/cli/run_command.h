// `anchorage run`: one generation on a model (a GGUF file, or random weights from a preset) —
// prefill a prompt (random ids from the seed, or --prompt-ids), decode, print the generated
// token ids and a timing summary to stdout. Exit codes: 0 ok, 1 a runtime failure, 2 bad usage.
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

// args: everything after `run`.
int run_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli

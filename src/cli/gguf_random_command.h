// `anchorage gguf-random`: writes a model of any preset with deterministic random weights as
// a GGUF file (arch qwen35, or qwen35moe for a MoE preset, or --arch qwen3next), every linear
// layer in --type (f32, f16, bf16 or a GGUF block type: q4_0 ... iq4_xs), or per tensor in
// turn from --mix; with --tokenizer-dir, the tokenizer and
// chat template of that directory's tokenizer.json / tokenizer_config.json go into the
// metadata as a converter writes them. Exit codes: 0 ok, 1 a runtime failure, 2 bad usage.
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

// args: everything after `gguf-random`.
int gguf_random_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli

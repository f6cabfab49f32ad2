// The value-head permutation between HF's grouped order and the tiled order of qwen35 /
// qwen35moe GGUF files (docs/model.md §6.5): a pure relabelling of the value heads of
// every GDN tensor (v rows of the qkv projection, z rows, b/a rows, the v channels of the conv,
// dt_bias, ssm_a and the input columns of the output projection). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "model/qwen35/tensors.h"

namespace anchorage::model::gguf {

// source[p] = the grouped head stored at tiled position p: (p mod n_k) * r + p div n_k.
std::vector<int64_t> tiled_to_grouped_heads(int64_t n_k, int64_t n_v);

// The same model with its value heads in the other order; cfg.value_heads_tiled set to match.
// A no-op copy when the tensors are already in the asked order.
qwen35::Qwen35Tensors with_value_heads_tiled(const qwen35::Qwen35Tensors& t, bool tiled);

}  // namespace anchorage::model::gguf

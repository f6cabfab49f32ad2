// The GGUF names of the qwen35 family (docs/model.md §6.1-6.3): the architectures we
// read, the metadata keys and each TensorRole's tensor name. Shared by the loader and the
// exporter so both spell every name the same way. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/qwen35/tensors.h"

namespace anchorage::model::gguf {

// "qwen35", "qwen35moe" or "qwen3next".
bool is_qwen35_family(std::string_view arch);
// qwen35 / qwen35moe files hold the value heads tiled (§6.5); qwen3next grouped.
bool arch_tiles_value_heads(std::string_view arch);

// "{arch}.{suffix}", e.g. key("qwen35", "ssm.conv_kernel").
std::string arch_key(std::string_view arch, std::string_view suffix);

// The tensor of a role in layer `layer` (-1 for the global ones): "blk.3.attn_q.weight",
// "token_embd.weight", "blk.0.ssm_a" (no suffix), "blk.0.ssm_dt.bias".
std::string tensor_name(qwen35::TensorRole role, int64_t layer);
// The GGUF shape {ne0, ne1, ...} of a slot: {cols, rows} for a matrix, {rows} for a vector,
// {K, conv_dim} for the conv weight, {in, F_e, E} / {F_e, H, E} for stacked experts.
std::vector<int64_t> gguf_shape(const qwen35::Qwen35Config& c, const qwen35::TensorSlot& s);
// Per-layer names without a TensorRole of their own: "blk.N.<base>".
std::string layer_tensor_name(int64_t layer, std::string_view base);

// GGUF token types (tokenizer.ggml.token_type).
enum GgufTokenType : int32_t {
  kTokenNormal = 1,
  kTokenUnknown = 2,
  kTokenControl = 3,
  kTokenUserDefined = 4,
  kTokenUnused = 5,
  kTokenByte = 6,
};

}  // namespace anchorage::model::gguf

// Writing a qwen35-family model as a GGUF file, the way llama.cpp's converter lays it out
// (docs/model.md §6): the metadata of §6.2 and every tensor under its §6.3 name and
// shape, value heads tiled for qwen35 / qwen35moe and grouped for qwen3next, qwen3next's b/a
// projections fused as ssm_ba (and, on request, the legacy fused ssm_in). Used by
// `anchorage gguf-random` and the loader's tests. Pure function of its inputs; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "model/gguf/gguf_writer.h"
#include "model/qwen35/tensors.h"

namespace anchorage::model::gguf {

struct GgufExportOptions {
  std::string arch = "qwen35";  // qwen35, qwen35moe or qwen3next
  // Linear layers (embedding and head included); a quantized type whose block does not
  // divide a row's length falls back to Q8_0, then to F32 (as llama.cpp's quantizer does).
  // Norms, vectors, ssm_a/ssm_dt and the conv weight are always F32.
  core::DType weight_type = core::DType::kF32;
  // When not empty, linear tensor slot i gets mixed_types[i % size] instead (same fallback
  // rule): a file mixing types per tensor, as llama.cpp's _M / _S quantizations write.
  std::vector<core::DType> mixed_types;
  bool legacy_ssm_in = false;   // qwen3next: write in_proj_qkvz fused as ssm_in (old files)
  bool fused_attn_qkv = false;  // full-attention layers: one attn_qkv (--fuse-qkv files)
  std::string name = "anchorage-random";
};

// The ggml storage type of a linear tensor with rows of `cols` under `requested` (the
// fallback rule above).
core::DType export_linear_type(core::DType requested, int64_t cols);

// Adds t's metadata and tensors to w. `stored` (may be null) receives the model the file
// holds in our conventions: value heads in the file's order, every weight's value as stored
// (quantized then read back), so a model built from it equals the loaded one bit for bit.
// InvalidArgument for an arch outside the family, or qwen3next options on another arch.
core::Status export_qwen35_gguf(const qwen35::Qwen35Tensors& t, const GgufExportOptions& o,
                                GgufWriter* w, qwen35::Qwen35Tensors* stored);

}  // namespace anchorage::model::gguf

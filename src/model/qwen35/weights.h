// Qwen35Weights: the packed weights the forward reads (docs/model.md §2-§4), one struct
// per layer kind. Linear layers are kernels::PackedWeight (any storage type: f32, bf16, f16,
// Q8_0, Q4_K, Q6_K); norms and small vectors stay f32. Conventions as in tensors.h: norms plain
// with +1 folded, ssm_a = -exp(A_log), conv tap-major, value heads in the config's order. Immutable
// after place_tensor() has filled every slot; then safe to share between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "kernels/packed_weight.h"
#include "model/qwen35/config.h"
#include "model/qwen35/tensors.h"

namespace anchorage::model::qwen35 {

// §2: one Gated DeltaNet mixer.
struct GdnWeights {
  kernels::PackedWeight in_proj_qkv;  // [conv_dim][H], rows q | k | v (§2.2)
  kernels::PackedWeight in_proj_z;    // [value_dim][H]
  kernels::PackedWeight in_proj_b;    // [n_v][H]
  kernels::PackedWeight in_proj_a;    // [n_v][H]
  std::vector<float> conv;            // [K][conv_dim], tap-major (kernels/conv1d.h)
  std::vector<float> dt_bias;         // [n_v]
  std::vector<float> ssm_a;           // [n_v], -exp(A_log) < 0
  std::vector<float> norm;            // [d_v], gated RMSNorm weight, plain, shared by heads
  kernels::PackedWeight out_proj;     // [H][value_dim]
};

// §3: one gated full-attention mixer.
struct AttentionWeights {
  kernels::PackedWeight q_proj;  // [2 n_q D][H], head h rows [2hD, 2hD+D) query, then D gate
  kernels::PackedWeight k_proj;  // [n_kv D][H]
  kernels::PackedWeight v_proj;  // [n_kv D][H]
  std::vector<float> q_norm;     // [D], +1 folded
  std::vector<float> k_norm;     // [D], +1 folded
  kernels::PackedWeight o_proj;  // [H][n_q D]
};

// §4.2: dense SwiGLU.
struct DenseFfnWeights {
  kernels::PackedWeight gate;  // [F][H]
  kernels::PackedWeight up;    // [F][H]
  kernels::PackedWeight down;  // [H][F]
};

// §4.3: routed experts + sigmoid-gated shared expert.
struct MoeFfnWeights {
  kernels::PackedWeight router;          // [E][H]
  std::vector<DenseFfnWeights> experts;  // E, each [F_e][H], [F_e][H], [H][F_e]
  DenseFfnWeights shared;                // [F_sh][H] ...; empty when F_sh == 0
  kernels::PackedWeight shared_scale;    // [1][H]: the shared expert's gate logit row
  int64_t top_k = 0;                     // num_experts_per_tok (set by empty_weights)
};

struct LayerWeights {
  std::vector<float> input_norm;                     // [H], +1 folded
  std::variant<GdnWeights, AttentionWeights> mixer;  // by the layer's LayerKind
  std::vector<float> post_norm;                      // [H], +1 folded
  std::variant<DenseFfnWeights, MoeFfnWeights> ffn;  // by cfg.is_moe_layer(l)
};

struct Qwen35Weights {
  // Where the linear layers' panels are cut from: one model's weights on shared huge pages
  // (core/huge_page_arena.h; empty_weights makes it, the placing below cuts from it).
  kernels::PackedWeight::Arena arena;
  kernels::PackedWeight embed;    // [V][H]; also the LM head when tied
  kernels::PackedWeight lm_head;  // [V][H]; empty when tied
  std::vector<float> final_norm;  // [H], +1 folded
  std::vector<LayerWeights> layers;

  const kernels::PackedWeight& head() const { return lm_head.rows() > 0 ? lm_head : embed; }
};

// A Qwen35Weights whose layers hold the right mixer and FFN alternatives (MoE layers with E
// empty experts) and an arena, and nothing else yet.
Qwen35Weights empty_weights(const Qwen35Config& cfg);

// Stores one tensor (f32, our conventions, slot's shape) into its place in w; linear layers
// are packed as `dtype` (any storage type; a quantized dtype whose block does not divide the
// tensor's inputs falls back to Q8_0, then to f32). Distinct slots may be placed from
// different threads at once.
void place_tensor(const TensorSlot& slot, const float* data, core::DType dtype, Qwen35Weights* w);

// place_tensor() of f32 rows made on demand: rows(r0, r1, out) writes rows [r0, r1) to out
// ([r1 - r0][slot.cols]). The embedding and an untied head are packed a few panels at a time
// (kernels::PackedWeight::from_f32_rows), never held whole as f32; any other tensor is made
// whole first. The same bytes as place_tensor() of all the rows.
void place_tensor_rows(const TensorSlot& slot, core::DType dtype,
                       const std::function<void(int64_t, int64_t, float*)>& rows, Qwen35Weights* w);

// Stores one tensor given as raw rows of src_type (a GGUF tensor's data: slot.rows rows of
// slot.cols elements, core::dtype_row_bytes(src_type, slot.cols) bytes each; our conventions
// and shapes, tensors.h). Linear layers keep src_type in memory (f32, bf16, f16, Q8_0, Q4_K,
// Q6_K: quantized bits are kept as they are); norms and vectors are dequantized to f32.
// Expert tensors ([E*F_e][H] ...) are split per expert. Distinct slots may be placed from
// different threads at once.
// keep: when set, data stays valid as long as keep lives (the mapped file), and linear layers
// stored as they come read it in place until packed (kernels::PackedWeight::over_rows(): a
// WeightPacker packs them later); when null every layer is packed now.
void place_tensor_raw(const TensorSlot& slot, const void* data, core::DType src_type,
                      Qwen35Weights* w, std::shared_ptr<const void> keep = nullptr);

// Every linear layer of w (copies: they share the panels), in the order a forward pass reads
// them: the embedding first, each layer's mixer and FFN (experts in order), the untied head.
std::vector<kernels::PackedWeight> linear_weights(const Qwen35Weights& w);

// Bytes one decode step reads: every layer weight, the norms and the head matrix (the
// embedding contributes one row per token, counted only through the head when tied).
int64_t decode_weight_bytes(const Qwen35Weights& w);

}  // namespace anchorage::model::qwen35

// Qwen35Weights: the packed weights the forward reads (docs/model-qwen35.md §2-§4), one struct
// per layer kind. Linear layers are kernels::PackedWeight (f32 or bf16); norms and small
// vectors stay f32. Conventions as in tensors.h: norms plain with +1 folded, ssm_a =
// -exp(A_log), conv tap-major, value heads in the config's order.
// Immutable after place_tensor() has filled every slot; then safe to share between threads.
#pragma once

#include <cstdint>
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

// §4.2: dense SwiGLU. (MoE, §4.3, will be a second alternative of LayerWeights::ffn.)
struct DenseFfnWeights {
  kernels::PackedWeight gate;  // [F][H]
  kernels::PackedWeight up;    // [F][H]
  kernels::PackedWeight down;  // [H][F]
};

struct LayerWeights {
  std::vector<float> input_norm;                     // [H], +1 folded
  std::variant<GdnWeights, AttentionWeights> mixer;  // by the layer's LayerKind
  std::vector<float> post_norm;                      // [H], +1 folded
  std::variant<DenseFfnWeights> ffn;                 // the FFN variant point
};

struct Qwen35Weights {
  kernels::PackedWeight embed;    // [V][H]; also the LM head when tied
  kernels::PackedWeight lm_head;  // [V][H]; empty when tied
  std::vector<float> final_norm;  // [H], +1 folded
  std::vector<LayerWeights> layers;

  const kernels::PackedWeight& head() const { return lm_head.rows() > 0 ? lm_head : embed; }
};

// A Qwen35Weights whose layers hold the right mixer alternative and nothing else yet.
Qwen35Weights empty_weights(const Qwen35Config& cfg);

// Stores one tensor (f32, our conventions, slot's shape) into its place in w; linear layers
// are packed as `dtype`. Distinct slots may be placed from different threads at once.
void place_tensor(const TensorSlot& slot, const float* data, core::DType dtype, Qwen35Weights* w);

// Bytes one decode step reads: every layer weight, the norms and the head matrix (the
// embedding contributes one row per token, counted only through the head when tied).
int64_t decode_weight_bytes(const Qwen35Weights& w);

}  // namespace anchorage::model::qwen35

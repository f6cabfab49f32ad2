// Qwen35Tensors: every weight of a model as plain f32 arrays in OUR conventions, before
// packing (the form random init produces, tests edit and the NumPy dumper converts to HF).
//
// Our conventions (the GGUF ones, docs/model.md §6.4): every RMSNorm weight has the
// +1 folded in and is applied plain; ssm_a holds -exp(A_log); the conv weight is tap-major
// [K][conv_dim]; linear weights are [out][in]; value heads are in the order the config says
// (grouped when !value_heads_tiled, tiled otherwise, §2.6).
//
// A value type, not thread-safe; random_tensor() may run for different slots in parallel.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "model/qwen35/config.h"

namespace anchorage::model::qwen35 {

enum class TensorRole : uint8_t {
  kEmbed,      // [V][H]
  kLmHead,     // [V][H], untied models only
  kFinalNorm,  // [H]
  kInputNorm,  // [H] per layer
  kPostNorm,   // [H] per layer
  kGdnQkv,     // [conv_dim][H]
  kGdnZ,       // [value_dim][H]
  kGdnB,       // [n_v][H]
  kGdnA,       // [n_v][H]
  kGdnConv,    // [K][conv_dim]
  kGdnDtBias,  // [n_v]
  kGdnSsmA,    // [n_v], -exp(A_log)
  kGdnNorm,    // [d_v], plain in every format
  kGdnOut,     // [H][value_dim]
  kAttnQ,      // [2 n_q D][H], per head [query D | gate D]
  kAttnK,      // [n_kv D][H]
  kAttnV,      // [n_kv D][H]
  kAttnQNorm,  // [D]
  kAttnKNorm,  // [D]
  kAttnO,      // [H][n_q D]
  kFfnGate,    // [F][H]
  kFfnUp,      // [F][H]
  kFfnDown,    // [H][F]
  // MoE FFN (§4.3), layers where cfg.is_moe_layer(l); E = num_experts,
  // F_e = moe_intermediate_size, F_sh = shared_expert_intermediate_size. A 3-D GGUF tensor
  // {H, F_e, E} is the 2-D slot [E*F_e][H]: expert e's rows are [e*F_e, (e+1)*F_e).
  kMoeRouter,       // [E][H], ffn_gate_inp (mlp.gate)
  kMoeGateExps,     // [E*F_e][H], ffn_gate_exps
  kMoeUpExps,       // [E*F_e][H], ffn_up_exps
  kMoeDownExps,     // [E*H][F_e], ffn_down_exps
  kMoeSharedGate,   // [F_sh][H], ffn_gate_shexp (only when F_sh > 0, as the three below)
  kMoeSharedUp,     // [F_sh][H], ffn_up_shexp
  kMoeSharedDown,   // [H][F_sh], ffn_down_shexp
  kMoeSharedScale,  // [H] vector (rows = H, cols = 1), ffn_gate_inp_shexp (shared_expert_gate)
};

struct TensorSlot {
  int64_t layer = -1;  // -1 for embedding, head and final norm
  TensorRole role = TensorRole::kEmbed;
  int64_t rows = 0;  // vectors: rows = length, cols = 1
  int64_t cols = 0;
  int64_t elements() const { return rows * cols; }
};

// Every tensor of the model in a fixed order (its index seeds its random init). A MoE layer
// lists kMoe* roles instead of kFfnGate/Up/Down.
std::vector<TensorSlot> tensor_slots(const Qwen35Config& cfg);

// The random init of slot `index` (docs/model.md "Random weights"): deterministic in
// (seed, index) on every machine.
std::vector<float> random_tensor(const Qwen35Config& cfg, const TensorSlot& slot, uint64_t seed,
                                 int64_t index);
// Rows [r0, r1) of the same, into out[0, (r1 - r0) * slot.cols) (every element written).
void random_tensor_rows(const Qwen35Config& cfg, const TensorSlot& slot, uint64_t seed,
                        int64_t index, int64_t r0, int64_t r1, float* out);

struct Qwen35Tensors {
  Qwen35Config cfg;
  std::vector<TensorSlot> slots;
  std::vector<std::vector<float>> data;  // data[i]: slots[i].elements() floats

  // The tensor of (layer, role); aborts if the model has none.
  std::vector<float>& at(int64_t layer, TensorRole role);
  const std::vector<float>& at(int64_t layer, TensorRole role) const;
  bool has(int64_t layer, TensorRole role) const;
};

// All tensors of random_tensor(); pool may be null.
Qwen35Tensors random_tensors(const Qwen35Config& cfg, uint64_t seed, core::ThreadPool* pool);

}  // namespace anchorage::model::qwen35

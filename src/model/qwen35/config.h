// Qwen35Config: the hyper-parameters of a Qwen3-Next / Qwen3.5 hybrid model
// (docs/model.md §1), read from an HF config.json by the field names of §1.2, or taken
// from a named preset. Derived quantities (§1.3) are methods. A value type: immutable after
// parsing, safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/dtype.h"
#include "core/status.h"

namespace anchorage::model::qwen35 {

enum class LayerKind : uint8_t { kLinearAttention = 0, kFullAttention = 1 };

struct Qwen35Config {
  std::string model_type;  // "qwen3_5_text", "qwen3_next", ...; informational

  int64_t hidden_size = 0;              // H
  int64_t num_hidden_layers = 0;        // L
  std::vector<LayerKind> layer_types;   // L entries (from layer_types or the interval rule)
  int64_t full_attention_interval = 4;  // used only when layer_types is absent

  // Gated DeltaNet (§2).
  int64_t linear_num_key_heads = 0;    // n_k
  int64_t linear_num_value_heads = 0;  // n_v
  int64_t linear_key_head_dim = 0;     // d_k
  int64_t linear_value_head_dim = 0;   // d_v
  int64_t linear_conv_kernel_dim = 0;  // K
  // Value-head order of the weights (§2.6): false = HF grouped, κ(h) = h / r;
  // true = GGUF qwen35 tiled, κ(h) = h mod n_k.
  bool value_heads_tiled = false;

  // Gated full attention (§3).
  int64_t num_attention_heads = 0;  // n_q
  int64_t num_key_value_heads = 0;  // n_kv
  int64_t head_dim = 0;             // D (not H / n_q)
  double partial_rotary_factor = 0.25;
  double rope_theta = 10000000.0;
  bool attention_bias = false;
  bool attn_output_gate = true;

  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";

  // FFN (§4.2 dense; §4.3 MoE).
  int64_t intermediate_size = 0;                // F, dense layers
  int64_t num_experts = 0;                      // E; 0 = every layer dense
  int64_t num_experts_per_tok = 0;              // top-k
  int64_t moe_intermediate_size = 0;            // F_e, one routed expert
  int64_t shared_expert_intermediate_size = 0;  // F_sh; 0 = no shared expert
  bool norm_topk_prob = true;                   // renormalise the top-k probabilities
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;

  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 262144;
  int64_t mtp_num_hidden_layers = 0;
  std::vector<int64_t> eos_token_ids;  // every eos id found (text_config and top level)

  // §1.3 derived quantities.
  int64_t r() const { return linear_num_value_heads / linear_num_key_heads; }
  int64_t key_dim() const { return linear_num_key_heads * linear_key_head_dim; }
  int64_t value_dim() const { return linear_num_value_heads * linear_value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  int64_t rotary_dim() const { return int64_t(double(head_dim) * partial_rotary_factor); }  // R
  int64_t n_full_layers() const;    // L_full
  int64_t n_linear_layers() const;  // L_lin
  bool is_full_attention(int64_t layer) const {
    return layer_types[size_t(layer)] == LayerKind::kFullAttention;
  }
  // §1.2: layer l is MoE iff num_experts > 0, l is not in mlp_only_layers and
  // (l+1) % decoder_sparse_step == 0; otherwise it runs the dense FFN.
  bool is_moe_layer(int64_t layer) const;
  // Index of `layer` among the layers of its own kind (its slot in gdn.S / K / V).
  int64_t kind_index(int64_t layer) const;

  // §1.5 sizes. KV bytes of one token over all full-attention layers (K and V).
  int64_t kv_bytes_per_token(core::DType kv_dtype) const;
  int64_t gdn_state_bytes() const;  // S, fp32: L_lin * n_v * d_k * d_v * 4
  int64_t conv_tail_bytes() const;  // fp32: L_lin * (K-1) * conv_dim * 4
  // Parameters of the main stack (embedding counted once when tied; no MTP).
  int64_t n_parameters() const;

  // Checks every constraint the forward relies on; the error names the offending field.
  core::Status validate() const;
};

// "tiny" (tests), "tiny-moe" (tiny with a MoE FFN in every layer: 8 experts, top 2, shared
// expert), "small" (benchmarks), "qwen3.5-0.8b", "qwen3.5-27b" (§1.4, sizing only).
core::Result<Qwen35Config> qwen35_preset(std::string_view name);

// Parses an HF config.json (Qwen3-Next: fields at the top level; Qwen3.5: under text_config)
// and validates it. Errors name the missing or invalid field.
core::Result<Qwen35Config> parse_hf_config(std::string_view json_text);

// The fields that compute rows, by their §1.2 names, for Qwen35Model::manifest(): every field
// but model_type (a label) and eos_token_ids (they end a generation, they compute no row).
nlohmann::json config_to_json(const Qwen35Config& c);

}  // namespace anchorage::model::qwen35

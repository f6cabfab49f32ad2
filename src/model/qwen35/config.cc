// Qwen35Config: derived sizes (§1.3, §1.5), validation and the presets (§1.4).
#include "model/qwen35/config.h"

#include <string>

namespace anchorage::model::qwen35 {

using core::Status;

int64_t Qwen35Config::n_full_layers() const {
  int64_t n = 0;
  for (LayerKind k : layer_types) n += k == LayerKind::kFullAttention ? 1 : 0;
  return n;
}

int64_t Qwen35Config::n_linear_layers() const {
  return int64_t(layer_types.size()) - n_full_layers();
}

bool Qwen35Config::is_moe_layer(int64_t layer) const {
  if (num_experts <= 0) return false;
  for (int64_t l : mlp_only_layers)
    if (l == layer) return false;
  return decoder_sparse_step > 0 && (layer + 1) % decoder_sparse_step == 0;
}

int64_t Qwen35Config::kind_index(int64_t layer) const {
  int64_t n = 0;
  for (int64_t i = 0; i < layer; ++i) n += layer_types[size_t(i)] == layer_types[size_t(layer)];
  return n;
}

// §1.5: L_full * 2 (K and V) * n_kv * D * sizeof(elem).
int64_t Qwen35Config::kv_bytes_per_token(core::DType kv_dtype) const {
  return n_full_layers() * 2 * num_key_value_heads * head_dim * core::dtype_size(kv_dtype);
}

int64_t Qwen35Config::gdn_state_bytes() const {
  return n_linear_layers() * linear_num_value_heads * linear_key_head_dim * linear_value_head_dim *
         4;
}

int64_t Qwen35Config::conv_tail_bytes() const {
  return n_linear_layers() * (linear_conv_kernel_dim - 1) * conv_dim() * 4;
}

int64_t Qwen35Config::n_parameters() const {
  const int64_t H = hidden_size;
  const int64_t n_v = linear_num_value_heads;
  const int64_t gdn = conv_dim() * H + value_dim() * H + 2 * n_v * H +
                      linear_conv_kernel_dim * conv_dim() + 2 * n_v + linear_value_head_dim +
                      H * value_dim();
  const int64_t qd = num_attention_heads * head_dim;
  const int64_t kvd = num_key_value_heads * head_dim;
  const int64_t attn = 2 * qd * H + 2 * kvd * H + H * qd + 2 * head_dim;
  const int64_t dense_ffn = 3 * H * intermediate_size;
  const int64_t moe_ffn = num_experts * H + num_experts * 3 * H * moe_intermediate_size +
                          3 * H * shared_expert_intermediate_size +
                          (shared_expert_intermediate_size > 0 ? H : 0);
  const int64_t per_layer_norms = 2 * H;
  int64_t n = vocab_size * H * (tie_word_embeddings ? 1 : 2) + H;
  for (int64_t l = 0; l < num_hidden_layers; ++l) {
    n += (is_full_attention(l) ? attn : gdn) + per_layer_norms;
    n += is_moe_layer(l) ? moe_ffn : dense_ffn;
  }
  return n;
}

namespace {

Status positive(int64_t v, const char* field) {
  if (v > 0) return Status::ok();
  return Status::invalid_argument(std::string(field) + " must be > 0, got " + std::to_string(v));
}

}  // namespace

Status Qwen35Config::validate() const {
  struct Field {
    int64_t v;
    const char* name;
  };
  for (const Field& f :
       {Field{hidden_size, "hidden_size"}, Field{num_hidden_layers, "num_hidden_layers"},
        Field{linear_num_key_heads, "linear_num_key_heads"},
        Field{linear_num_value_heads, "linear_num_value_heads"},
        Field{linear_key_head_dim, "linear_key_head_dim"},
        Field{linear_value_head_dim, "linear_value_head_dim"},
        Field{linear_conv_kernel_dim, "linear_conv_kernel_dim"},
        Field{num_attention_heads, "num_attention_heads"},
        Field{num_key_value_heads, "num_key_value_heads"}, Field{head_dim, "head_dim"},
        Field{vocab_size, "vocab_size"}}) {
    if (Status s = positive(f.v, f.name); !s.is_ok()) return s;
  }
  if (int64_t(layer_types.size()) != num_hidden_layers) {
    return Status::invalid_argument("layer_types has " + std::to_string(layer_types.size()) +
                                    " entries, num_hidden_layers is " +
                                    std::to_string(num_hidden_layers));
  }
  if (linear_num_value_heads % linear_num_key_heads != 0) {
    return Status::invalid_argument("linear_num_value_heads (" +
                                    std::to_string(linear_num_value_heads) +
                                    ") must be a multiple of linear_num_key_heads (" +
                                    std::to_string(linear_num_key_heads) + ")");
  }
  // The conv tail holds K-1 inputs; a 1-tap conv would make gdn.conv an empty section.
  if (linear_conv_kernel_dim < 2) {
    return Status::invalid_argument("linear_conv_kernel_dim must be >= 2");
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    return Status::invalid_argument("num_attention_heads (" + std::to_string(num_attention_heads) +
                                    ") must be a multiple of num_key_value_heads (" +
                                    std::to_string(num_key_value_heads) + ")");
  }
  const int64_t R = rotary_dim();
  if (!(partial_rotary_factor > 0.0 && partial_rotary_factor <= 1.0) || R < 2 || R % 2 != 0) {
    return Status::invalid_argument(
        "partial_rotary_factor * head_dim must give an even rotary dim in [2, head_dim]");
  }
  if (!(rope_theta > 0.0)) return Status::invalid_argument("rope_theta must be > 0");
  if (!(rms_norm_eps > 0.0)) return Status::invalid_argument("rms_norm_eps must be > 0");
  if (hidden_act != "silu") return Status::unsupported("hidden_act '" + hidden_act + "'");
  if (attention_bias) return Status::unsupported("attention_bias = true");
  if (!attn_output_gate) return Status::unsupported("attn_output_gate = false");
  if (num_experts < 0) return Status::invalid_argument("num_experts must be >= 0");
  bool any_dense = false;
  for (int64_t l = 0; l < num_hidden_layers; ++l) any_dense = any_dense || !is_moe_layer(l);
  if (any_dense) {
    if (Status s = positive(intermediate_size, "intermediate_size"); !s.is_ok()) return s;
  }
  if (num_experts > 0) {
    if (decoder_sparse_step <= 0)
      return Status::invalid_argument("decoder_sparse_step must be > 0");
    if (Status s = positive(moe_intermediate_size, "moe_intermediate_size"); !s.is_ok()) return s;
    if (num_experts_per_tok < 1 || num_experts_per_tok > num_experts) {
      return Status::invalid_argument(
          "num_experts_per_tok must be in [1, num_experts = " + std::to_string(num_experts) +
          "], got " + std::to_string(num_experts_per_tok));
    }
    if (shared_expert_intermediate_size < 0) {
      return Status::invalid_argument("shared_expert_intermediate_size must be >= 0");
    }
  }
  return Status::ok();
}

namespace {

std::vector<LayerKind> interval_schedule(int64_t n_layers, int64_t interval) {
  std::vector<LayerKind> kinds(size_t(n_layers), LayerKind::kLinearAttention);
  for (int64_t i = 0; i < n_layers; ++i) {
    if ((i + 1) % interval == 0) kinds[size_t(i)] = LayerKind::kFullAttention;
  }
  return kinds;
}

// Fields shared by every Qwen3.5 dense preset (§1.4: identical across the releases).
Qwen35Config qwen35_dense_base() {
  Qwen35Config c;
  c.model_type = "qwen3_5_text";
  c.linear_key_head_dim = 128;
  c.linear_value_head_dim = 128;
  c.linear_conv_kernel_dim = 4;
  c.head_dim = 256;
  c.partial_rotary_factor = 0.25;
  c.rope_theta = 1e7;
  c.rms_norm_eps = 1e-6;
  c.vocab_size = 248320;
  c.eos_token_ids = {248044, 248046};
  c.mtp_num_hidden_layers = 1;
  return c;
}

Qwen35Config preset_tiny() {
  Qwen35Config c;
  c.model_type = "anchorage_tiny";
  c.hidden_size = 64;
  c.num_hidden_layers = 8;
  c.layer_types = interval_schedule(8, 4);  // full attention at 3 and 7
  c.linear_num_key_heads = 2;
  c.linear_num_value_heads = 4;  // r = 2: exercises the head mapping
  c.linear_key_head_dim = 16;
  c.linear_value_head_dim = 16;
  c.linear_conv_kernel_dim = 4;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;  // GQA
  c.head_dim = 32;            // R = 8
  c.partial_rotary_factor = 0.25;
  c.rope_theta = 1e7;
  c.rms_norm_eps = 1e-6;
  c.intermediate_size = 128;
  c.vocab_size = 512;
  c.tie_word_embeddings = true;
  c.eos_token_ids = {2};
  return c;
}

// tiny with a MoE FFN in every layer (§4.3): 8 experts of width 32, top 2, renormalised,
// and a shared expert of width 64. No dense FFN.
Qwen35Config preset_tiny_moe() {
  Qwen35Config c = preset_tiny();
  c.model_type = "anchorage_tiny_moe";
  c.intermediate_size = 0;
  c.num_experts = 8;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 32;
  c.shared_expert_intermediate_size = 64;
  c.norm_topk_prob = true;
  return c;
}

// ~130M parameters, most of them in the 151,936 x 512 embedding: a CPU-sized benchmark model.
Qwen35Config preset_small() {
  Qwen35Config c;
  c.model_type = "anchorage_small";
  c.hidden_size = 512;
  c.num_hidden_layers = 12;
  c.layer_types = interval_schedule(12, 4);  // full attention at 3, 7, 11
  c.linear_num_key_heads = 4;
  c.linear_num_value_heads = 8;
  c.linear_key_head_dim = 128;
  c.linear_value_head_dim = 128;
  c.linear_conv_kernel_dim = 4;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 128;
  c.partial_rotary_factor = 0.25;
  c.rope_theta = 1e7;
  c.rms_norm_eps = 1e-6;
  c.intermediate_size = 1536;
  c.vocab_size = 151936;
  c.tie_word_embeddings = true;
  c.eos_token_ids = {151643, 151645};
  return c;
}

Qwen35Config preset_0_8b() {
  Qwen35Config c = qwen35_dense_base();
  c.hidden_size = 1024;
  c.num_hidden_layers = 24;
  c.layer_types = interval_schedule(24, 4);
  c.linear_num_key_heads = 16;
  c.linear_num_value_heads = 16;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 2;
  c.intermediate_size = 3584;
  c.tie_word_embeddings = true;
  return c;
}

Qwen35Config preset_27b() {
  Qwen35Config c = qwen35_dense_base();
  c.hidden_size = 5120;
  c.num_hidden_layers = 64;
  c.layer_types = interval_schedule(64, 4);
  c.linear_num_key_heads = 16;
  c.linear_num_value_heads = 48;
  c.num_attention_heads = 24;
  c.num_key_value_heads = 4;
  c.intermediate_size = 17408;
  c.tie_word_embeddings = false;
  return c;
}

}  // namespace

core::Result<Qwen35Config> qwen35_preset(std::string_view name) {
  Qwen35Config c;
  if (name == "tiny") {
    c = preset_tiny();
  } else if (name == "tiny-moe") {
    c = preset_tiny_moe();
  } else if (name == "small") {
    c = preset_small();
  } else if (name == "qwen3.5-0.8b") {
    c = preset_0_8b();
  } else if (name == "qwen3.5-27b") {
    c = preset_27b();
  } else {
    return Status::not_found("unknown qwen35 preset '" + std::string(name) +
                             "' (tiny, tiny-moe, small, qwen3.5-0.8b, qwen3.5-27b)");
  }
  if (Status s = c.validate(); !s.is_ok()) return s;
  return c;
}

}  // namespace anchorage::model::qwen35

// parse_hf_config: HF config.json -> Qwen35Config (docs/model.md §1.1-§1.2).
// nlohmann::json is used in its non-throwing mode only (parse with allow_exceptions = false,
// every access checks the type first), so nothing here throws.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "model/qwen35/config.h"

namespace anchorage::model::qwen35 {

using core::Status;
using nlohmann::json;

namespace {

// Reads the fields of one JSON object, remembering the first error. Each getter leaves its
// output untouched when the key is absent (the caller's default stands).
class FieldReader {
 public:
  explicit FieldReader(const json& obj) : obj_(obj) {}

  bool has(const char* key) const { return obj_.contains(key) && !obj_.at(key).is_null(); }

  void get_int(const char* key, int64_t* out, bool required = false) {
    if (!has(key)) {
      if (required) fail(Status::invalid_argument(std::string("missing field ") + key));
      return;
    }
    const json& v = obj_.at(key);
    if (v.is_number_integer() || v.is_number_unsigned()) {
      *out = v.get<int64_t>();
    } else {
      fail(Status::invalid_argument(std::string("field ") + key + ": expected an integer"));
    }
  }

  void get_double(const char* key, double* out) {
    if (!has(key)) return;
    const json& v = obj_.at(key);
    if (v.is_number()) {
      *out = v.get<double>();
    } else {
      fail(Status::invalid_argument(std::string("field ") + key + ": expected a number"));
    }
  }

  void get_bool(const char* key, bool* out) {
    if (!has(key)) return;
    const json& v = obj_.at(key);
    if (v.is_boolean()) {
      *out = v.get<bool>();
    } else {
      fail(Status::invalid_argument(std::string("field ") + key + ": expected a boolean"));
    }
  }

  void get_string(const char* key, std::string* out) {
    if (!has(key)) return;
    const json& v = obj_.at(key);
    if (v.is_string()) {
      *out = v.get<std::string>();
    } else {
      fail(Status::invalid_argument(std::string("field ") + key + ": expected a string"));
    }
  }

  // An integer or a list of integers (eos_token_id), appended to out.
  void get_int_list(const char* key, std::vector<int64_t>* out) {
    if (!has(key)) return;
    const json& v = obj_.at(key);
    if (v.is_number_integer() || v.is_number_unsigned()) {
      out->push_back(v.get<int64_t>());
      return;
    }
    if (!v.is_array()) {
      fail(Status::invalid_argument(std::string("field ") + key + ": expected integers"));
      return;
    }
    for (const json& e : v) {
      if (!(e.is_number_integer() || e.is_number_unsigned())) {
        fail(Status::invalid_argument(std::string("field ") + key + ": expected integers"));
        return;
      }
      out->push_back(e.get<int64_t>());
    }
  }

  void fail(Status s) {
    if (status_.is_ok()) status_ = std::move(s);
  }
  const Status& status() const { return status_; }

 private:
  const json& obj_;
  Status status_;
};

Status read_layer_types(const json& text, Qwen35Config* c) {
  if (!text.contains("layer_types") || text.at("layer_types").is_null()) {
    // §1.2: without layer_types, layer i is full attention iff (i+1) % interval == 0.
    if (c->full_attention_interval <= 0) {
      return Status::invalid_argument("full_attention_interval must be > 0");
    }
    c->layer_types.assign(size_t(std::max<int64_t>(c->num_hidden_layers, 0)),
                          LayerKind::kLinearAttention);
    for (int64_t i = 0; i < c->num_hidden_layers; ++i) {
      if ((i + 1) % c->full_attention_interval == 0) {
        c->layer_types[size_t(i)] = LayerKind::kFullAttention;
      }
    }
    return Status::ok();
  }
  const json& lt = text.at("layer_types");
  if (!lt.is_array()) return Status::invalid_argument("field layer_types: expected a list");
  c->layer_types.clear();
  for (size_t i = 0; i < lt.size(); ++i) {
    const json& e = lt[i];
    if (e.is_string() && e.get<std::string>() == "linear_attention") {
      c->layer_types.push_back(LayerKind::kLinearAttention);
    } else if (e.is_string() && e.get<std::string>() == "full_attention") {
      c->layer_types.push_back(LayerKind::kFullAttention);
    } else {
      return Status::invalid_argument("field layer_types[" + std::to_string(i) +
                                      "]: expected \"linear_attention\" or \"full_attention\"");
    }
  }
  return Status::ok();
}

// §1.1: rope_parameters first, then the flat keys; partial_rotary_factor defaults to 0.25.
Status read_rope(const json& text, Qwen35Config* c) {
  bool have_theta = false;
  bool have_factor = false;
  if (text.contains("rope_parameters") && !text.at("rope_parameters").is_null()) {
    const json& rp = text.at("rope_parameters");
    if (!rp.is_object()) {
      return Status::invalid_argument("field rope_parameters: expected an object");
    }
    FieldReader r(rp);
    std::string rope_type = "default";
    r.get_string("rope_type", &rope_type);
    have_theta = r.has("rope_theta");
    have_factor = r.has("partial_rotary_factor");
    r.get_double("rope_theta", &c->rope_theta);
    r.get_double("partial_rotary_factor", &c->partial_rotary_factor);
    if (!r.status().is_ok()) {
      return Status::invalid_argument("rope_parameters: " + r.status().message());
    }
    // mrope_section / mrope_interleaved change nothing for text positions (§3.3).
    if (rope_type != "default") {
      return Status::unsupported("rope_parameters.rope_type '" + rope_type + "'");
    }
  }
  FieldReader flat(text);
  if (!have_theta) {
    have_theta = flat.has("rope_theta");
    flat.get_double("rope_theta", &c->rope_theta);
  }
  if (!have_factor) flat.get_double("partial_rotary_factor", &c->partial_rotary_factor);
  if (!flat.status().is_ok()) return flat.status();
  if (!have_theta) return Status::invalid_argument("missing field rope_theta");
  return Status::ok();
}

}  // namespace

core::Result<Qwen35Config> parse_hf_config(std::string_view json_text) {
  const json top = json::parse(json_text.begin(), json_text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (top.is_discarded() || !top.is_object()) {
    return Status::invalid_argument("config.json is not a JSON object");
  }
  // §1.1: Qwen3.5 nests the language model under text_config; Qwen3-Next is flat.
  const bool nested = top.contains("text_config") && top.at("text_config").is_object();
  const json& text = nested ? top.at("text_config") : top;

  Qwen35Config c;
  c.partial_rotary_factor = 0.25;
  c.tie_word_embeddings = false;
  FieldReader r(text);
  r.get_string("model_type", &c.model_type);
  r.get_int("hidden_size", &c.hidden_size, true);
  r.get_int("num_hidden_layers", &c.num_hidden_layers, true);
  r.get_int("full_attention_interval", &c.full_attention_interval);
  r.get_int("linear_num_key_heads", &c.linear_num_key_heads, true);
  r.get_int("linear_num_value_heads", &c.linear_num_value_heads, true);
  r.get_int("linear_key_head_dim", &c.linear_key_head_dim, true);
  r.get_int("linear_value_head_dim", &c.linear_value_head_dim, true);
  r.get_int("linear_conv_kernel_dim", &c.linear_conv_kernel_dim, true);
  r.get_int("num_attention_heads", &c.num_attention_heads, true);
  r.get_int("num_key_value_heads", &c.num_key_value_heads, true);
  r.get_int("head_dim", &c.head_dim, true);
  r.get_bool("attention_bias", &c.attention_bias);
  r.get_bool("attn_output_gate", &c.attn_output_gate);
  r.get_double("rms_norm_eps", &c.rms_norm_eps);
  r.get_string("hidden_act", &c.hidden_act);
  r.get_int("intermediate_size", &c.intermediate_size);
  r.get_int("num_experts", &c.num_experts);
  r.get_int("num_experts_per_tok", &c.num_experts_per_tok);
  r.get_int("moe_intermediate_size", &c.moe_intermediate_size);
  r.get_int("shared_expert_intermediate_size", &c.shared_expert_intermediate_size);
  r.get_bool("norm_topk_prob", &c.norm_topk_prob);
  r.get_int("decoder_sparse_step", &c.decoder_sparse_step);
  r.get_int_list("mlp_only_layers", &c.mlp_only_layers);
  r.get_int("vocab_size", &c.vocab_size, true);
  r.get_int("max_position_embeddings", &c.max_position_embeddings);
  r.get_int("mtp_num_hidden_layers", &c.mtp_num_hidden_layers);
  r.get_int_list("eos_token_id", &c.eos_token_ids);
  // tie_word_embeddings: top level for Qwen3.5 (HF reads it there), else wherever it is.
  FieldReader top_r(top);
  if (nested && top_r.has("tie_word_embeddings")) {
    top_r.get_bool("tie_word_embeddings", &c.tie_word_embeddings);
  } else {
    r.get_bool("tie_word_embeddings", &c.tie_word_embeddings);
  }
  if (nested) {
    std::string top_type;
    top_r.get_string("model_type", &top_type);
    if (c.model_type.empty()) c.model_type = top_type;
    top_r.get_int_list("eos_token_id", &c.eos_token_ids);
  }
  if (!r.status().is_ok()) return r.status();
  if (!top_r.status().is_ok()) return top_r.status();
  if (Status s = read_layer_types(text, &c); !s.is_ok()) return s;
  if (Status s = read_rope(text, &c); !s.is_ok()) return s;
  if (Status s = c.validate(); !s.is_ok()) return s;
  return c;
}

json config_to_json(const Qwen35Config& c) {
  json layer_types = json::array();
  for (LayerKind k : c.layer_types)
    layer_types.push_back(k == LayerKind::kFullAttention ? "full_attention" : "linear_attention");
  return json{
      {"hidden_size", c.hidden_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"layer_types", layer_types},
      {"linear_num_key_heads", c.linear_num_key_heads},
      {"linear_num_value_heads", c.linear_num_value_heads},
      {"linear_key_head_dim", c.linear_key_head_dim},
      {"linear_value_head_dim", c.linear_value_head_dim},
      {"linear_conv_kernel_dim", c.linear_conv_kernel_dim},
      {"value_heads_tiled", c.value_heads_tiled},
      {"num_attention_heads", c.num_attention_heads},
      {"num_key_value_heads", c.num_key_value_heads},
      {"head_dim", c.head_dim},
      {"partial_rotary_factor", c.partial_rotary_factor},
      {"rope_theta", c.rope_theta},
      {"attention_bias", c.attention_bias},
      {"attn_output_gate", c.attn_output_gate},
      {"rms_norm_eps", c.rms_norm_eps},
      {"hidden_act", c.hidden_act},
      {"intermediate_size", c.intermediate_size},
      {"num_experts", c.num_experts},
      {"num_experts_per_tok", c.num_experts_per_tok},
      {"moe_intermediate_size", c.moe_intermediate_size},
      {"shared_expert_intermediate_size", c.shared_expert_intermediate_size},
      {"norm_topk_prob", c.norm_topk_prob},
      {"decoder_sparse_step", c.decoder_sparse_step},
      {"mlp_only_layers", c.mlp_only_layers},
      {"vocab_size", c.vocab_size},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"max_position_embeddings", c.max_position_embeddings},
      {"mtp_num_hidden_layers", c.mtp_num_hidden_layers},
  };
}

}  // namespace anchorage::model::qwen35

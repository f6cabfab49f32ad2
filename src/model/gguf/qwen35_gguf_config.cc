// GGUF metadata -> Qwen35Config (docs/model.md §6.2). Every size is bounded before it
// is used, so a corrupt file cannot make the loader allocate by a huge layer count or width.
#include <cmath>
#include <string>

#include "model/gguf/qwen35_gguf_loader.h"
#include "model/gguf/qwen35_gguf_names.h"

namespace anchorage::model::gguf {

using core::Result;
using core::Status;
using qwen35::LayerKind;
using qwen35::Qwen35Config;

namespace {

// Sanity limits, far above any published model, that keep every size product in range.
constexpr int64_t kMaxLayers = 4096;

Status check_limits(const Qwen35Config& c) {
  const struct {
    const char* name;
    int64_t value;
    int64_t max;
  } limits[] = {
      {"embedding_length", c.hidden_size, 65536},
      {"attention.head_count", c.num_attention_heads, 4096},
      {"attention.head_count_kv", c.num_key_value_heads, 4096},
      {"attention.key_length", c.head_dim, 4096},
      {"ssm.group_count", c.linear_num_key_heads, 4096},
      {"ssm.time_step_rank", c.linear_num_value_heads, 4096},
      {"ssm.state_size", c.linear_key_head_dim, 4096},
      {"ssm.inner_size / time_step_rank", c.linear_value_head_dim, 4096},
      {"ssm.conv_kernel", c.linear_conv_kernel_dim, 64},
      {"feed_forward_length", c.intermediate_size, int64_t(1) << 20},
      {"expert_count", c.num_experts, 4096},
      {"expert_used_count", c.num_experts_per_tok, 4096},
      {"expert_feed_forward_length", c.moe_intermediate_size, int64_t(1) << 20},
      {"expert_shared_feed_forward_length", c.shared_expert_intermediate_size, int64_t(1) << 20},
      {"vocabulary (token_embd rows)", c.vocab_size, int64_t(1) << 24},
  };
  for (const auto& l : limits) {
    if (l.value < 0 || l.value > l.max) {
      return Status::corruption("gguf (" + c.model_type + "): " + l.name + " = " +
                                std::to_string(l.value) + " is out of range (at most " +
                                std::to_string(l.max) + ")");
    }
  }
  return Status::ok();
}

// An integer key that may be a scalar or a per-layer array whose entries (over the first
// n_layer layers) must all be equal. fallback < 0: the key is required.
Result<int64_t> uniform_int(const GgufFile& f, const std::string& key, int64_t n_layer,
                            int64_t fallback) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) {
    if (fallback >= 0) return fallback;
    return Status::not_found("gguf: missing key '" + key + "'");
  }
  if (v->type != GgufType::kArray) return f.get_int(key);
  auto a = v->as_int_array();
  if (!a || int64_t(a->size()) < n_layer || n_layer < 1) {
    return Status::corruption("gguf: key '" + key +
                              "' is not an integer array of one entry a layer");
  }
  for (int64_t l = 1; l < n_layer; ++l) {
    if ((*a)[size_t(l)] != (*a)[0]) {
      return Status::unsupported("gguf: key '" + key + "' differs between layers");
    }
  }
  return (*a)[0];
}

}  // namespace

Result<Qwen35Config> qwen35_config_from_gguf(const GgufFile& f) {
  auto arch_r = f.get_string("general.architecture");
  if (!arch_r) return arch_r.error();
  const std::string arch = *arch_r;
  if (!is_qwen35_family(arch)) {
    return Status::unsupported("gguf: architecture '" + arch +
                               "' (supported: qwen35, qwen35moe, qwen3next)");
  }
  auto key = [&](const char* s) { return arch_key(arch, s); };
  Qwen35Config c;
  c.model_type = arch;
  Status err;
  auto req = [&](const char* k, int64_t* out) {
    if (!err.is_ok()) return;
    auto r = f.get_int(key(k));
    if (!r) {
      err = r.error();
      return;
    }
    if (*r < 0 || *r > (int64_t(1) << 40)) {
      err = Status::corruption("gguf: key '" + key(k) + "' is out of range");
      return;
    }
    *out = *r;
  };
  int64_t block_count = 0, nextn = 0;
  req("block_count", &block_count);
  if (!err.is_ok()) return err;
  auto nx = f.get_int_or(key("nextn_predict_layers"), 0);
  if (!nx) return nx.error();
  nextn = *nx;
  if (nextn < 0 || nextn >= block_count) {
    return Status::corruption("gguf: block_count " + std::to_string(block_count) +
                              " leaves no main layers after nextn_predict_layers " +
                              std::to_string(nextn));
  }
  if (block_count > kMaxLayers) {
    return Status::corruption("gguf: block_count " + std::to_string(block_count) +
                              " is out of range (at most " + std::to_string(kMaxLayers) + ")");
  }
  const int64_t n_layer = block_count - nextn;
  c.num_hidden_layers = n_layer;
  c.mtp_num_hidden_layers = nextn;
  req("embedding_length", &c.hidden_size);
  req("attention.head_count", &c.num_attention_heads);
  req("ssm.conv_kernel", &c.linear_conv_kernel_dim);
  req("ssm.state_size", &c.linear_key_head_dim);
  req("ssm.group_count", &c.linear_num_key_heads);
  req("ssm.time_step_rank", &c.linear_num_value_heads);
  int64_t inner = 0;
  req("ssm.inner_size", &inner);
  if (!err.is_ok()) return err;
  auto kv_heads = uniform_int(f, key("attention.head_count_kv"), n_layer, -1);
  if (!kv_heads) return kv_heads.error();
  c.num_key_value_heads = *kv_heads;
  if (c.linear_num_value_heads <= 0 || inner % c.linear_num_value_heads != 0) {
    return Status::corruption("gguf: ssm.inner_size " + std::to_string(inner) +
                              " is not a multiple of ssm.time_step_rank");
  }
  c.linear_value_head_dim = inner / c.linear_num_value_heads;
  const int64_t default_d = c.num_attention_heads > 0 ? c.hidden_size / c.num_attention_heads : 0;
  auto d = f.get_int_or(key("attention.key_length"), default_d);
  if (!d) return d.error();
  c.head_dim = *d;
  auto dv = f.get_int_or(key("attention.value_length"), c.head_dim);
  if (!dv) return dv.error();
  if (*dv != c.head_dim) {
    return Status::unsupported("gguf: attention.value_length differs from key_length");
  }
  auto rot = f.get_int_or(key("rope.dimension_count"), c.head_dim);
  if (!rot) return rot.error();
  if (c.head_dim <= 0 || *rot <= 0 || *rot > c.head_dim) {
    return Status::corruption("gguf: rope.dimension_count out of range");
  }
  c.partial_rotary_factor = double(*rot) / double(c.head_dim);
  // rotary_dim() truncates D * factor: make sure it gives back exactly R.
  while (c.rotary_dim() < *rot)
    c.partial_rotary_factor = std::nextafter(c.partial_rotary_factor, 2.0);
  auto theta = f.get_double(key("rope.freq_base"));
  if (!theta) return theta.error();
  c.rope_theta = *theta;
  auto eps = f.get_double(key("attention.layer_norm_rms_epsilon"));
  if (!eps) return eps.error();
  c.rms_norm_eps = *eps;
  auto ctx = f.get_int_or(key("context_length"), c.max_position_embeddings);
  if (!ctx) return ctx.error();
  c.max_position_embeddings = *ctx;
  auto interval = f.get_int_or(key("full_attention_interval"), 4);
  if (!interval) return interval.error();
  if (*interval < 1) return Status::corruption("gguf: full_attention_interval must be >= 1");
  c.full_attention_interval = *interval;
  c.layer_types.resize(size_t(n_layer));
  if (const GgufValue* rec = f.find(key("attention.recurrent_layers"))) {
    auto flags = rec->as_int_array();
    if (!flags || int64_t(flags->size()) < n_layer) {
      return Status::corruption("gguf: attention.recurrent_layers must have one flag a layer");
    }
    for (int64_t l = 0; l < n_layer; ++l) {
      c.layer_types[size_t(l)] =
          (*flags)[size_t(l)] != 0 ? LayerKind::kLinearAttention : LayerKind::kFullAttention;
    }
  } else {
    for (int64_t l = 0; l < n_layer; ++l) {
      c.layer_types[size_t(l)] =
          (l + 1) % *interval != 0 ? LayerKind::kLinearAttention : LayerKind::kFullAttention;
    }
  }
  // FFN widths: feed_forward_length may be absent for MoE files.
  auto ff = uniform_int(f, key("feed_forward_length"), n_layer, arch == "qwen35" ? -1 : 0);
  if (!ff) return ff.error();
  c.intermediate_size = *ff;
  auto n_exp = f.get_int_or(key("expert_count"), 0);
  if (!n_exp) return n_exp.error();
  c.num_experts = *n_exp;
  if (c.num_experts > 0) {
    auto used = f.get_int(key("expert_used_count"));
    if (!used) return used.error();
    c.num_experts_per_tok = *used;
    auto eff = f.get_int_or(key("expert_feed_forward_length"), 0);
    auto sff = f.get_int_or(key("expert_shared_feed_forward_length"), 0);
    if (!eff) return eff.error();
    if (!sff) return sff.error();
    c.moe_intermediate_size = *eff;
    c.shared_expert_intermediate_size = *sff;
    c.norm_topk_prob = true;  // llama.cpp hard-codes softmax gating with normalised top-k
  }
  const GgufTensorInfo* embd = f.tensor("token_embd.weight");
  if (embd == nullptr) return Status::not_found("gguf: missing tensor 'token_embd.weight'");
  if (embd->ne.size() != 2) {
    return Status::corruption("gguf: tensor 'token_embd.weight' has shape " + embd->shape_string() +
                              ", expected {H, vocab}");
  }
  c.vocab_size = embd->ne[1];
  c.tie_word_embeddings = f.tensor("output.weight") == nullptr;
  c.value_heads_tiled = arch_tiles_value_heads(arch);
  for (const char* k : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (f.find(k) == nullptr) continue;
    auto id = f.get_int(k);
    if (!id) return id.error();
    bool seen = false;
    for (int64_t e : c.eos_token_ids) seen = seen || e == *id;
    if (!seen) c.eos_token_ids.push_back(*id);
  }
  if (Status s = check_limits(c); !s.is_ok()) return s;
  if (Status s = c.validate(); !s.is_ok()) {
    return Status(s.code() == core::StatusCode::kUnsupported
                      ? Status::unsupported("gguf (" + arch + "): " + s.message())
                      : Status::corruption("gguf (" + arch + "): " + s.message()));
  }
  return c;
}

}  // namespace anchorage::model::gguf

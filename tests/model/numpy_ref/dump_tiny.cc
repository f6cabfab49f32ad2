// dump_tiny: writes the `tiny` qwen35 model's weights in HF conventions (.npy, HF tensor
// names), a config.json, token ids, the logits of a prefill (every row) and of decode steps
// (T = 1 on the carried state), and the final recurrent state, for qwen35_ref.py to check
// against an independent float64 NumPy implementation of docs/model.md.
//
// Usage: dump_tiny OUT_DIR [SEED]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/aligned_buffer.h"
#include "core/rng.h"
#include "model/qwen35/qwen35_model.h"
#include "support/npy_writer.h"

namespace q = anchorage::model::qwen35;
using anchorage::core::AlignedBuffer;

namespace {

constexpr int64_t kPrefillTokens = 13;
constexpr int64_t kDecodeSteps = 6;

std::string hf_name(const q::TensorSlot& s) {
  const std::string base = "model.language_model.";
  const std::string layer = base + "layers." + std::to_string(s.layer) + ".";
  switch (s.role) {
    case q::TensorRole::kEmbed:
      return base + "embed_tokens.weight";
    case q::TensorRole::kLmHead:
      return "lm_head.weight";
    case q::TensorRole::kFinalNorm:
      return base + "norm.weight";
    case q::TensorRole::kInputNorm:
      return layer + "input_layernorm.weight";
    case q::TensorRole::kPostNorm:
      return layer + "post_attention_layernorm.weight";
    case q::TensorRole::kGdnQkv:
      return layer + "linear_attn.in_proj_qkv.weight";
    case q::TensorRole::kGdnZ:
      return layer + "linear_attn.in_proj_z.weight";
    case q::TensorRole::kGdnB:
      return layer + "linear_attn.in_proj_b.weight";
    case q::TensorRole::kGdnA:
      return layer + "linear_attn.in_proj_a.weight";
    case q::TensorRole::kGdnConv:
      return layer + "linear_attn.conv1d.weight";
    case q::TensorRole::kGdnDtBias:
      return layer + "linear_attn.dt_bias";
    case q::TensorRole::kGdnSsmA:
      return layer + "linear_attn.A_log";
    case q::TensorRole::kGdnNorm:
      return layer + "linear_attn.norm.weight";
    case q::TensorRole::kGdnOut:
      return layer + "linear_attn.out_proj.weight";
    case q::TensorRole::kAttnQ:
      return layer + "self_attn.q_proj.weight";
    case q::TensorRole::kAttnK:
      return layer + "self_attn.k_proj.weight";
    case q::TensorRole::kAttnV:
      return layer + "self_attn.v_proj.weight";
    case q::TensorRole::kAttnQNorm:
      return layer + "self_attn.q_norm.weight";
    case q::TensorRole::kAttnKNorm:
      return layer + "self_attn.k_norm.weight";
    case q::TensorRole::kAttnO:
      return layer + "self_attn.o_proj.weight";
    case q::TensorRole::kFfnGate:
      return layer + "mlp.gate_proj.weight";
    case q::TensorRole::kFfnUp:
      return layer + "mlp.up_proj.weight";
    case q::TensorRole::kFfnDown:
      return layer + "mlp.down_proj.weight";
    case q::TensorRole::kMoeRouter:  // MoE is not in the NumPy check yet (tiny is dense)
    case q::TensorRole::kMoeGateExps:
    case q::TensorRole::kMoeUpExps:
    case q::TensorRole::kMoeDownExps:
    case q::TensorRole::kMoeSharedGate:
    case q::TensorRole::kMoeSharedUp:
    case q::TensorRole::kMoeSharedDown:
    case q::TensorRole::kMoeSharedScale:
      break;
  }
  return "?";
}

// Our convention -> HF's (docs/model.md §6.4, undone): RMSNorm1p weights lose the
// folded +1 (the GDN norm is plain in both), ssm_a = -exp(A_log) becomes A_log, the tap-major
// conv [K][C] becomes [C, 1, K]. float64, so no conversion rounds.
void to_hf(const q::TensorSlot& s, const std::vector<float>& x, std::vector<double>* out,
           std::vector<int64_t>* shape) {
  const int64_t n = s.elements();
  out->assign(x.begin(), x.end());
  *shape = s.cols == 1 ? std::vector<int64_t>{s.rows} : std::vector<int64_t>{s.rows, s.cols};
  switch (s.role) {
    case q::TensorRole::kFinalNorm:
    case q::TensorRole::kInputNorm:
    case q::TensorRole::kPostNorm:
    case q::TensorRole::kAttnQNorm:
    case q::TensorRole::kAttnKNorm:
      for (int64_t i = 0; i < n; ++i) (*out)[size_t(i)] -= 1.0;
      break;
    case q::TensorRole::kGdnSsmA:
      for (int64_t i = 0; i < n; ++i) (*out)[size_t(i)] = std::log(-double(x[size_t(i)]));
      break;
    case q::TensorRole::kGdnConv: {
      const int64_t K = s.rows, C = s.cols;
      for (int64_t c = 0; c < C; ++c) {
        for (int64_t j = 0; j < K; ++j) (*out)[size_t(c * K + j)] = x[size_t(j * C + c)];
      }
      *shape = {C, 1, K};
      break;
    }
    default:
      break;
  }
}

nlohmann::json hf_config(const q::Qwen35Config& c) {
  nlohmann::json t;
  t["model_type"] = "qwen3_5_text";
  t["hidden_size"] = c.hidden_size;
  t["num_hidden_layers"] = c.num_hidden_layers;
  nlohmann::json lt = nlohmann::json::array();
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    lt.push_back(c.is_full_attention(l) ? "full_attention" : "linear_attention");
  }
  t["layer_types"] = lt;
  t["linear_num_key_heads"] = c.linear_num_key_heads;
  t["linear_num_value_heads"] = c.linear_num_value_heads;
  t["linear_key_head_dim"] = c.linear_key_head_dim;
  t["linear_value_head_dim"] = c.linear_value_head_dim;
  t["linear_conv_kernel_dim"] = c.linear_conv_kernel_dim;
  t["num_attention_heads"] = c.num_attention_heads;
  t["num_key_value_heads"] = c.num_key_value_heads;
  t["head_dim"] = c.head_dim;
  t["rope_parameters"] = {{"rope_type", "default"},
                          {"rope_theta", c.rope_theta},
                          {"partial_rotary_factor", c.partial_rotary_factor}};
  t["rms_norm_eps"] = c.rms_norm_eps;
  t["intermediate_size"] = c.intermediate_size;
  t["vocab_size"] = c.vocab_size;
  t["hidden_act"] = "silu";
  nlohmann::json top;
  top["model_type"] = "qwen3_5";
  top["tie_word_embeddings"] = c.tie_word_embeddings;
  top["text_config"] = t;
  return top;
}

bool check(const anchorage::core::Status& s) {
  if (!s.is_ok()) std::fprintf(stderr, "dump_tiny: %s\n", s.to_string().c_str());
  return s.is_ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dump_tiny OUT_DIR [SEED]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1234;
  auto cfg = q::qwen35_preset("tiny");
  if (!cfg) {
    check(cfg.error());
    return 1;
  }

  const q::Qwen35Tensors tensors = q::random_tensors(*cfg, seed, nullptr);
  auto model = q::make_qwen35_from_tensors(tensors, q::Qwen35Options{}, nullptr);
  if (!model) {
    check(model.error());
    return 1;
  }
  const q::Qwen35Model& m = **model;

  {  // config.json, re-read by parse_hf_config so the file and the preset cannot drift.
    const std::string text = hf_config(*cfg).dump(2);
    std::ofstream(dir + "/config.json") << text;
    auto parsed = q::parse_hf_config(text);
    if (!parsed || parsed->conv_dim() != cfg->conv_dim() ||
        parsed->n_full_layers() != cfg->n_full_layers() ||
        parsed->rotary_dim() != cfg->rotary_dim()) {
      std::fprintf(stderr, "dump_tiny: config.json does not round-trip\n");
      return 1;
    }
  }
  for (size_t i = 0; i < tensors.slots.size(); ++i) {
    std::vector<double> hf;
    std::vector<int64_t> shape;
    to_hf(tensors.slots[i], tensors.data[i], &hf, &shape);
    if (!check(anchorage::test::write_npy(dir + "/" + hf_name(tensors.slots[i]) + ".npy", hf.data(),
                                          shape))) {
      return 1;
    }
  }

  const int64_t n_total = kPrefillTokens + kDecodeSteps;
  const int64_t V = cfg->vocab_size;
  std::vector<int32_t> tokens(static_cast<size_t>(n_total));
  anchorage::core::Rng rng(seed + 1);
  for (auto& t : tokens) t = int32_t(rng.next_u64() % uint64_t(V));

  const anchorage::core::StateLayout layout = m.state_layout(n_total);
  std::vector<AlignedBuffer> bufs;
  anchorage::model::StateBuffers state;
  state.capacity = n_total;
  for (const auto& s : layout.sections) {
    bufs.emplace_back(size_t(s.bytes()));
    state.sections.push_back(bufs.back().data());
  }
  for (const auto& v : layout.views) {
    bufs.emplace_back(size_t(v.bytes()));
    state.views.push_back(bufs.back().data());
  }
  AlignedBuffer ws(size_t(m.workspace_bytes(kPrefillTokens)));

  // Prefill: every row's logits. Then decode steps, one token per call on the carried state.
  std::vector<float> logits(static_cast<size_t>(n_total * V));
  anchorage::model::ForwardRequest req;
  req.tokens = tokens.data();
  req.n_tokens = kPrefillTokens;
  req.pos0 = 0;
  req.logits_from = 0;
  req.logits = logits.data();
  m.forward(req, state, ws.data(), nullptr);
  for (int64_t t = kPrefillTokens; t < n_total; ++t) {
    req.tokens = tokens.data() + t;
    req.n_tokens = 1;
    req.pos0 = t;
    req.logits = logits.data() + t * V;
    m.forward(req, state, ws.data(), nullptr);
  }
  bool ok = check(anchorage::test::write_npy(dir + "/tokens.npy", tokens.data(), {n_total}));
  ok = ok && check(anchorage::test::write_npy(dir + "/logits.npy", logits.data(), {n_total, V}));
  const auto& S = layout.sections[0];
  const auto& conv = layout.sections[1];
  ok = ok && check(anchorage::test::write_npy(dir + "/state_S.npy",
                                              static_cast<float*>(state.sections[0]), S.shape));
  ok = ok && check(anchorage::test::write_npy(dir + "/state_conv.npy",
                                              static_cast<float*>(state.sections[1]), conv.shape));
  nlohmann::json meta = {{"prefill_tokens", kPrefillTokens}, {"decode_steps", kDecodeSteps}};
  std::ofstream(dir + "/dump.json") << meta.dump(2);
  std::printf("dump_tiny: %zu tensors, %lld tokens written to the output dir\n",
              tensors.slots.size(), (long long)n_total);
  return ok ? 0 : 1;
}

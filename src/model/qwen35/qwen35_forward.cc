// Qwen35Model::forward: docs/model.md §2-§4 as a flat list of kernel calls, each
// citing its section. Weights follow the GGUF conventions (tensors.h): every RMSNorm is
// applied plain with the +1 already folded in.
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/conv1d.h"
#include "kernels/gdn.h"
#include "kernels/gemm.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/qwen35/layer_state.h"
#include "model/qwen35/qwen35_model.h"
#include "model/qwen35/scratch.h"

namespace anchorage::model::qwen35 {

namespace kn = anchorage::kernels;

namespace {

// §2.4: HF/FLA's fixed eps of the GDN L2 norm (not rms_norm_eps).
constexpr float kL2NormEps = 1e-6f;

}  // namespace

void Qwen35Model::forward(const ForwardRequest& req, const StateBuffers& state, void* workspace,
                          core::ThreadPool* pool) const {
  run(req, state, workspace, pool, nullptr);
}

void Qwen35Model::test_forward_hidden(const ForwardRequest& req, const StateBuffers& state,
                                      void* workspace, core::ThreadPool* pool,
                                      float* hidden) const {
  run(req, state, workspace, pool, hidden);
}

void Qwen35Model::run(const ForwardRequest& req, const StateBuffers& state, void* workspace,
                      core::ThreadPool* pool, float* hidden) const {
  const int64_t T = req.n_tokens, H = cfg_.hidden_size, V = cfg_.vocab_size;
  const float eps = float(cfg_.rms_norm_eps);
  ANCHORAGE_CHECK(T >= 1 && req.pos0 >= 0);
  ANCHORAGE_CHECK(req.logits_from >= 0 && req.logits_from <= T);
  ANCHORAGE_CHECK(req.logits_from == T || req.logits != nullptr);
  ANCHORAGE_CHECK(state.sections.size() == 2 && state.views.size() == 2);
  ANCHORAGE_CHECK(cfg_.n_full_layers() == 0 || req.pos0 + T <= state.capacity);
  Scratch s;
  Scratch::carve(cfg_, T, static_cast<float*>(workspace), &s);
  OpProfile* prof = req.profile;

  {  // §4.1: h = embed[token], no scale.
    OpTimer timer(prof, OpKind::kEmbed);
    for (int64_t t = 0; t < T; ++t) {
      const int32_t tok = req.tokens[t];
      ANCHORAGE_CHECK(tok >= 0 && tok < V);
      w_.embed.get_row(tok, s.h + t * H);
    }
  }
  for (int64_t l = 0; l < cfg_.num_hidden_layers; ++l) {
    const LayerWeights& L = w_.layers[size_t(l)];
    {  // §4.1: u = RMSNorm1p(h; input_layernorm), weight folded: plain norm.
      OpTimer timer(prof, OpKind::kNorm);
      kn::rmsnorm(s.h, T, H, H, L.input_norm.data(), eps, s.u, H);
    }
    if (cfg_.is_full_attention(l)) {
      run_attention(l, s, req, state, pool);  // §3
    } else {
      run_gdn(l, s, req, state, pool);  // §2
    }
    {  // §4.1: h = h + mixer(u)
      OpTimer timer(prof, OpKind::kActivation);
      kn::add(s.h, s.out, T * H, s.h);
    }
    {  // §4.1: u = RMSNorm1p(h; post_attention_layernorm)
      OpTimer timer(prof, OpKind::kNorm);
      kn::rmsnorm(s.h, T, H, H, L.post_norm.data(), eps, s.u, H);
    }
    run_ffn(l, s, req, pool);  // §4.2
    {                          // §4.1: h = h + FFN(u)
      OpTimer timer(prof, OpKind::kActivation);
      kn::add(s.h, s.out, T * H, s.h);
    }
  }
  if (hidden) std::memcpy(hidden, s.h, size_t(T * H) * sizeof(float));
  const int64_t r0 = req.logits_from;
  if (r0 < T) {
    // §4.4: final norm and head, only for the rows whose logits are asked for.
    OpTimer timer(prof, OpKind::kHead);
    kn::rmsnorm(s.h + r0 * H, T - r0, H, H, w_.final_norm.data(), eps, s.u + r0 * H, H);
    kn::gemm(s.u + r0 * H, T - r0, H, w_.head(), req.logits, V, pool);
  }
}

void Qwen35Model::run_gdn(int64_t layer, const Scratch& s, const ForwardRequest& req,
                          const StateBuffers& state, core::ThreadPool* pool) const {
  const GdnWeights& w = std::get<GdnWeights>(w_.layers[size_t(layer)].mixer);
  const int64_t T = s.T, H = cfg_.hidden_size;
  const int64_t n_k = cfg_.linear_num_key_heads, n_v = cfg_.linear_num_value_heads;
  const int64_t d_k = cfg_.linear_key_head_dim, d_v = cfg_.linear_value_head_dim;
  const int64_t Kc = cfg_.linear_conv_kernel_dim;
  const int64_t key_dim = cfg_.key_dim(), value_dim = cfg_.value_dim(), C = cfg_.conv_dim();
  const GdnLayerState ls = gdn_layer_state(cfg_, state, kind_index_[size_t(layer)]);
  OpProfile* prof = req.profile;

  {  // §2.2: qkv = W_qkv u, z = W_z u, b = W_b u, a = W_a u (one group: the same input)
    OpTimer timer(prof, OpKind::kGemm);
    const kn::GemmOutput outs[] = {{&w.in_proj_qkv, s.qkv, C},
                                   {&w.in_proj_z, s.z, value_dim},
                                   {&w.in_proj_b, s.b, n_v},
                                   {&w.in_proj_a, s.a, n_v}};
    kn::gemm_group(s.u, T, H, outs, pool);
  }
  {  // §2.3: causal depthwise conv over (tail | qkv), SiLU; the tail advances.
    OpTimer timer(prof, OpKind::kConv);
    kn::conv1d_silu(s.qkv, T, C, C, ls.conv_tail, w.conv.data(), Kc, s.y, C, pool);
  }
  {
    OpTimer timer(prof, OpKind::kGdnGates);
    // §2.4: q̃ = q / sqrt(Σq² + 1e-6) / sqrt(d_k); k̂ = k / sqrt(Σk² + 1e-6). v untouched.
    const float q_scale = float(1.0 / std::sqrt(double(d_k)));
    kn::l2norm_heads(s.y, T, n_k, d_k, C, kL2NormEps, q_scale);
    kn::l2norm_heads(s.y + key_dim, T, n_k, d_k, C, kL2NormEps, 1.0f);
    // §2.5: beta = sigmoid(b); g = ssm_a * softplus(a + dt_bias).
    kn::gdn_gates(s.b, n_v, s.a, n_v, T, n_v, w.ssm_a.data(), w.dt_bias.data(), s.beta, s.g);
  }
  {  // §2.6-§2.7: per-token gated delta rule on the layer's states; κ by the head order.
    OpTimer timer(prof, OpKind::kGdn);
    const kn::GdnDims dims{n_k, n_v, d_k, d_v, cfg_.value_heads_tiled};
    kn::gdn_recurrence(dims, T, s.y, C, s.y + key_dim, C, s.y + 2 * key_dim, C, s.beta, s.g, ls.S,
                       s.o, value_dim, pool);
  }
  {  // §2.9: per head n = RMSNorm(o; w_norm) (plain), out = n * silu(z)
    OpTimer timer(prof, OpKind::kActivation);
    kn::gated_rmsnorm(s.o, value_dim, s.z, value_dim, T, n_v, d_v, w.norm.data(),
                      float(cfg_.rms_norm_eps), s.gated, value_dim);
  }
  {  // §2.9: y = W_out · concat_h(out_h)
    OpTimer timer(prof, OpKind::kGemm);
    kn::gemm(s.gated, T, value_dim, w.out_proj, s.out, H, pool);
  }
}

void Qwen35Model::run_attention(int64_t layer, const Scratch& s, const ForwardRequest& req,
                                const StateBuffers& state, core::ThreadPool* pool) const {
  const AttentionWeights& w = std::get<AttentionWeights>(w_.layers[size_t(layer)].mixer);
  const int64_t T = s.T, H = cfg_.hidden_size;
  const int64_t n_q = cfg_.num_attention_heads, n_kv = cfg_.num_key_value_heads;
  const int64_t D = cfg_.head_dim, qd = n_q * D, kvd = n_kv * D;
  const float eps = float(cfg_.rms_norm_eps);
  const AttentionLayerState ls =
      attention_layer_state(cfg_, opts_.kv_dtype, state, kind_index_[size_t(layer)]);
  const kn::AttentionDims dims{n_q, n_kv, D, state.capacity, opts_.kv_dtype};
  OpProfile* prof = req.profile;

  {  // §3.1: qg = W_q u (per head [query D | gate D]), k = W_k u, v = W_v u
    OpTimer timer(prof, OpKind::kGemm);
    const kn::GemmOutput outs[] = {
        {&w.q_proj, s.qg, 2 * qd}, {&w.k_proj, s.k, kvd}, {&w.v_proj, s.v, kvd}};
    kn::gemm_group(s.u, T, H, outs, pool);
  }
  {  // §3.2: per-head RMSNorm1p (folded: plain) of query and k, before RoPE. Reading qg as
     // T*n_q rows of D with stride 2D picks query_h = qg[2hD, 2hD+D) and writes them packed.
    OpTimer timer(prof, OpKind::kNorm);
    kn::rmsnorm(s.qg, T * n_q, D, 2 * D, w.q_norm.data(), eps, s.q, D);
    kn::rmsnorm(s.k, T * n_kv, D, D, w.k_norm.data(), eps, s.k, D);
  }
  {  // §3.3: partial NeoX RoPE on the first R dims at absolute positions pos0..
    OpTimer timer(prof, OpKind::kRope);
    const int64_t R = cfg_.rotary_dim();
    const float theta = float(cfg_.rope_theta);
    kn::rope_neox(s.q, T, qd, n_q, D, R, req.pos0, theta);
    kn::rope_neox(s.k, T, kvd, n_kv, D, R, req.pos0, theta);
  }
  {  // §3.4: cache rows get k (normed, rotated) and raw v; causal GQA softmax attention.
    OpTimer timer(prof, OpKind::kAttention);
    kn::kv_store(dims, s.k, kvd, s.v, kvd, T, req.pos0, ls.K, ls.V);
    kn::attention(dims, s.q, qd, T, req.pos0, ls.K, ls.V, s.ao, qd, pool);
  }
  {  // §3.4: o *= sigmoid(gate), gate_h = qg[2hD+D, 2hD+2D) (T*n_q rows of D, stride 2D).
    OpTimer timer(prof, OpKind::kActivation);
    kn::mul_sigmoid(s.ao, D, s.qg + D, 2 * D, T * n_q, D);
  }
  {  // §3.4: o_proj
    OpTimer timer(prof, OpKind::kGemm);
    kn::gemm(s.ao, T, qd, w.o_proj, s.out, H, pool);
  }
}

void Qwen35Model::run_ffn(int64_t layer, const Scratch& s, const ForwardRequest& req,
                          core::ThreadPool* pool) const {
  if (cfg_.is_moe_layer(layer)) return run_moe(layer, s, req, pool);  // §4.3
  const DenseFfnWeights& w = std::get<DenseFfnWeights>(w_.layers[size_t(layer)].ffn);
  const int64_t T = s.T, H = cfg_.hidden_size, F = cfg_.intermediate_size;
  OpProfile* prof = req.profile;
  {  // §4.2: gate = W_gate u, up = W_up u
    OpTimer timer(prof, OpKind::kGemm);
    const kn::GemmOutput outs[] = {{&w.gate, s.ffn_gate, F}, {&w.up, s.ffn_up, F}};
    kn::gemm_group(s.u, T, H, outs, pool);
  }
  {  // §4.2: silu(gate) ⊙ up
    OpTimer timer(prof, OpKind::kActivation);
    kn::swiglu(s.ffn_gate, s.ffn_up, T * F, s.ffn_gate);
  }
  {  // §4.2: W_down
    OpTimer timer(prof, OpKind::kGemm);
    kn::gemm(s.ffn_gate, T, F, w.down, s.out, H, pool);
  }
}

}  // namespace anchorage::model::qwen35

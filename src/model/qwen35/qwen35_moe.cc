// Qwen35Model::run_moe: the MoE FFN of docs/model.md §4.3, batch-invariant.
//
// Why a token's output does not depend on the batch (docs/architecture.md §4):
//   - router logits, every expert's and the shared expert's projections are GEMM rows, and a
//     GEMM row's bits do not depend on which other rows share the call;
//   - softmax, top-k and the weights are computed per token from its own logits only;
//   - each expert runs on just the rows routed to it (gathered into a compact batch), and its
//     output row goes to the token's slot for that rank, moe_out[t][r]; the routed sum is then
//     taken per token in rank order r = 0, 1, ..., k-1, whatever order the experts ran in.
#include <cstring>

#include "core/check.h"
#include "kernels/activation.h"
#include "kernels/gemm.h"
#include "model/qwen35/qwen35_model.h"
#include "model/qwen35/scratch.h"

namespace anchorage::model::qwen35 {

namespace kn = anchorage::kernels;

namespace {

// §4.3 for one token: p = softmax(logits) (max-subtracted, the project's exp, the sum over
// experts in index order, then one division each); the k largest p, ties to the lower expert
// index; weights p / (sum of the chosen p, in rank order) when renormalising, else p.
void route(const float* logits, int64_t E, int64_t k, bool renormalise, float* p, int32_t* ids,
           float* weights) {
  float m = logits[0];
  for (int64_t e = 1; e < E; ++e) m = logits[e] > m ? logits[e] : m;
  float sum = 0.0f;
  for (int64_t e = 0; e < E; ++e) {
    p[e] = kn::exp_f32(logits[e] - m);
    sum += p[e];
  }
  for (int64_t e = 0; e < E; ++e) p[e] = p[e] / sum;
  for (int64_t r = 0; r < k; ++r) {
    int32_t best = -1;
    for (int64_t e = 0; e < E; ++e) {
      bool taken = false;
      for (int64_t q = 0; q < r; ++q) taken = taken || ids[q] == int32_t(e);
      if (!taken && (best < 0 || p[e] > p[best])) best = int32_t(e);
    }
    ids[r] = best;
  }
  float chosen = 0.0f;
  for (int64_t r = 0; r < k; ++r) chosen += p[ids[r]];
  for (int64_t r = 0; r < k; ++r) weights[r] = renormalise ? p[ids[r]] / chosen : p[ids[r]];
}

}  // namespace

void Qwen35Model::run_moe(int64_t layer, const Scratch& s, const ForwardRequest& req,
                          core::ThreadPool* pool) const {
  const MoeFfnWeights& w = std::get<MoeFfnWeights>(w_.layers[size_t(layer)].ffn);
  const int64_t T = s.T, H = cfg_.hidden_size, E = cfg_.num_experts;
  const int64_t k = cfg_.num_experts_per_tok, Fe = cfg_.moe_intermediate_size;
  const int64_t Fsh = cfg_.shared_expert_intermediate_size;
  OpProfile* prof = req.profile;
  {  // §4.3: router logits (f32), then per token softmax, top-k and weights
    OpTimer timer(prof, OpKind::kGemm);
    kn::gemm(s.u, T, H, w.router, s.moe_logits, E, pool);
  }
  {
    OpTimer timer(prof, OpKind::kActivation);
    // The probabilities go over the logits in place (each row is read before written).
    for (int64_t t = 0; t < T; ++t) {
      float* row = s.moe_logits + t * E;
      route(row, E, k, cfg_.norm_topk_prob, row, s.moe_ids + t * k, s.moe_weights + t * k);
    }
  }
  // §4.3: each expert over the rows routed to it; its outputs go to their (token, rank) slots.
  for (int64_t e = 0; e < E; ++e) {
    int64_t n = 0;
    for (int64_t slot = 0; slot < T * k; ++slot) {
      if (s.moe_ids[slot] != int32_t(e)) continue;
      s.moe_rows[n] = int32_t(slot);
      std::memcpy(s.moe_x + n * H, s.u + (slot / k) * H, size_t(H) * sizeof(float));
      ++n;
    }
    if (n == 0) continue;
    const DenseFfnWeights& x = w.experts[size_t(e)];
    {
      OpTimer timer(prof, OpKind::kGemm);
      const kn::GemmOutput outs[] = {{&x.gate, s.ffn_gate, Fe}, {&x.up, s.ffn_up, Fe}};
      kn::gemm_group(s.moe_x, n, H, outs, pool);
    }
    {
      OpTimer timer(prof, OpKind::kActivation);
      kn::swiglu(s.ffn_gate, s.ffn_up, n * Fe, s.ffn_gate);
    }
    {
      OpTimer timer(prof, OpKind::kGemm);
      kn::gemm(s.ffn_gate, n, Fe, x.down, s.moe_y, H, pool);
    }
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(s.moe_out + int64_t(s.moe_rows[j]) * H, s.moe_y + j * H,
                  size_t(H) * sizeof(float));
    }
  }
  {  // routed = Σ_r w_r · Expert_{id_r}(u), per token in rank order
    OpTimer timer(prof, OpKind::kActivation);
    for (int64_t t = 0; t < T; ++t) {
      const float* wt = s.moe_weights + t * k;
      const float* y = s.moe_out + t * k * H;
      float* out = s.out + t * H;
      for (int64_t i = 0; i < H; ++i) out[i] = wt[0] * y[i];
      for (int64_t r = 1; r < k; ++r) {
        for (int64_t i = 0; i < H; ++i) out[i] = out[i] + wt[r] * y[r * H + i];
      }
    }
  }
  if (Fsh == 0) return;
  {  // §4.3: shared = sigmoid(w_sg · u) · SharedExpert(u)
    OpTimer timer(prof, OpKind::kGemm);
    const kn::GemmOutput outs[] = {{&w.shared.gate, s.ffn_gate, Fsh},
                                   {&w.shared.up, s.ffn_up, Fsh},
                                   {&w.shared_scale, s.moe_shared_gate, 1}};
    kn::gemm_group(s.u, T, H, outs, pool);
  }
  {
    OpTimer timer(prof, OpKind::kActivation);
    kn::swiglu(s.ffn_gate, s.ffn_up, T * Fsh, s.ffn_gate);
  }
  {
    OpTimer timer(prof, OpKind::kGemm);
    kn::gemm(s.ffn_gate, T, Fsh, w.shared.down, s.moe_y, H, pool);
  }
  {  // FFN(u) = routed + shared
    OpTimer timer(prof, OpKind::kActivation);
    for (int64_t t = 0; t < T; ++t) {
      const float g = kn::sigmoid(s.moe_shared_gate[t]);
      const float* y = s.moe_y + t * H;
      float* out = s.out + t * H;
      for (int64_t i = 0; i < H; ++i) out[i] = out[i] + g * y[i];
    }
  }
}

}  // namespace anchorage::model::qwen35

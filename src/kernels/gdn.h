// The Gated DeltaNet recurrence, per token (docs/model.md §2.5–§2.7), fp32 state.
// Prefill and decode run this same per-token code, which is what makes a resumed prefill equal
// a cold one at any token (docs/architecture.md §4).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace anchorage::kernels {

struct GdnDims {
  int64_t n_k = 0;  // key heads
  int64_t n_v = 0;  // value heads (states)
  int64_t d_k = 0;
  int64_t d_v = 0;
  bool tiled = false;  // value head h reads key head h % n_k (GGUF qwen35), else h / (n_v/n_k)
  int64_t key_head(int64_t h) const { return tiled ? h % n_k : h / (n_v / n_k); }
};

// State columns a decode step (T = 1) takes a task and walks at once: a whole row of a 128-wide
// head's S, read and written as one run of 512 bytes (gdn.cc; gdn_impl.h's kGdnDecodeVectors).
inline constexpr int64_t kGdnDecodeColumns = 128;

// §2.5 gates, for T rows of n_v values: beta = sigmoid(b); g = A[h] * softplus(a + dt_bias[h])
// where A = -exp(A_log) (GGUF ssm_a). b, a: [T][ld]; beta, g: [T][n_v]. Scalar code (the
// functions of activation.h; a + dt_bias rounded to fp32 first), calling thread only.
void gdn_gates(const float* b, int64_t ldb, const float* a, int64_t lda, int64_t T, int64_t n_v,
               const float* A, const float* dt_bias, float* beta, float* g);

// §2.7 for T tokens in order. q: [T][ldq] with key head j at q + j*d_k (L2-normed and scaled by
// 1/sqrt(d_k)); k likewise (L2-normed); v: [T][ldv], value head h at v + h*d_v. beta, g:
// [T][n_v]. S: [n_v][d_k][d_v] (S[h][i][j] at (h*d_k + i)*d_v + j), updated in place.
// o: [T][ldo], value head h at o + h*d_v. Per token and head:
//   S *= exp(g); m = Sᵀk; δ = beta (v - m); S += k δᵀ; o = Sᵀq,
// each sum over i an FMA chain in increasing i. Pinned per element (kernels/gdn_impl.h), with
// α = exp_f32(g): S[i][j] = S[i][j]·α; m = fma(S[i][j], k[i], m) from +0; δ = β·(v[j] - m);
// S[i][j] = fma(k[i], δ, S[i][j]); o = fma(S[i][j], q[i], o) from +0. Columns j never mix, so
// the state is vectorised along j with no horizontal sum: the same bits in every ISA. Tasks
// of (value head, 64 state columns) are split over the pool's threads (pool may be null), each
// running all T tokens, so its slice of S stays in L1; a decode step (T = 1) takes
// kGdnDecodeColumns a task instead. Neither split changes a bit.
void gdn_recurrence(const GdnDims& dims, int64_t T, const float* q, int64_t ldq, const float* k,
                    int64_t ldk, const float* v, int64_t ldv, const float* beta, const float* g,
                    float* S, float* o, int64_t ldo, core::ThreadPool* pool);

}  // namespace anchorage::kernels

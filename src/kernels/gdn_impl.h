// The Gated DeltaNet recurrence over V16 (kernels/gdn.h, docs/model.md §2.7), compiled
// once per ISA inside its namespace by kernels/vector_kernels_*.cc; needs blocks_impl.h and
// exp_impl.h before it. Includes nothing.
//
// Per token t and value head h, for each state column j (value index), with k = k[κ(h)],
// q = q[κ(h)], α = exp(g) (the project's exp), β = beta:
//   pass 1, i = 0 .. d_k-1:  S[i][j] = S[i][j] · α;   m = fma(S[i][j], k[i], m)      (m from +0)
//   δ = β · (v[j] - m)
//   pass 2, i = 0 .. d_k-1:  S[i][j] = fma(k[i], δ, S[i][j]);   o = fma(S[i][j], q[i], o)  (o from
//   +0) o[t][j] = o
// Column j never reads another column, so the state is vectorised along j (V16 lanes =
// 16 columns, k[i] and q[i] broadcast) and the sums over i are per-lane fma chains in
// increasing i: no horizontal sum, the same bits in every ISA and for any column split.
// A call walks one head's column block [j0, j1) through all T tokens, a few V16 of columns at a
// time, so that slice of S (d_k × 64 floats, 32 KiB for d_k = 128) stays in L1 for the whole
// call and its m, δ and o live in registers.

// V16 of columns held at once: their m/o accumulators and δ must fit the register file
// (AVX-512: 4 zmm each of 32; AVX2: a V16 is two ymm of 16). The bits do not depend on it.
#if defined(ANCHORAGE_V16_AVX512)
constexpr int kGdnVectors = 4;
#else
constexpr int kGdnVectors = 2;
#endif
// V16 of columns a decode step (T = 1) takes at once (kernels/gdn.h's kGdnDecodeColumns: 8), so
// each of S's rows of a 128-wide head is read and written as one run of 512 bytes, where
// kGdnVectors' blocks read it in strided parts. A decode step keeps no state in L1 between tokens,
// so nothing is lost; on AVX2 its 16 accumulators spill, and it is faster still. The 0.8B decode's
// recurrence took 0.97 ms a token before and 0.54 after on AVX-512, 0.83 and 0.56 on AVX2
// (docs/kernels.md, gdn_recurrence).
constexpr int kGdnDecodeVectors = int(kGdnDecodeColumns / 16);

// The state columns [c0, c0 + 16·NB) of head h through T tokens; unless kFull, the last V16
// has `last` lanes.
template <int NB, bool kFull>
inline void gdn_column_block(const GdnDims& dims, int64_t h, int64_t c0, int last, int64_t T,
                             const float* q, int64_t ldq, const float* k, int64_t ldk,
                             const float* v, int64_t ldv, const float* beta, const float* g,
                             float* Sh, float* o, int64_t ldo) {
  const int64_t dk = dims.d_k;
  const int64_t dv = dims.d_v;
  const int64_t nv = dims.n_v;
  const int64_t kh = dims.key_head(h);
  // Lanes of V16 b; the b loops are unrolled, so this folds to 16 except in the last one.
  const auto lanes = [last](int b) { return !kFull && b == NB - 1 ? last : 16; };
  float alpha[16];
  for (int64_t t = 0; t < T; ++t) {
    if (t % 16 == 0) {  // α for the next 16 tokens, lane by lane the scalar exp_f32
      float gt[16];
      const int n = T - t < 16 ? int(T - t) : 16;
      for (int u = 0; u < n; ++u) gt[u] = g[(t + u) * nv + h];
      store_n(exp_v(load_n(gt, n)), alpha, n);
    }
    const float* kt = k + t * ldk + kh * dk;
    const float* qt = q + t * ldq + kh * dk;
    const V16 a = V16::bcast(alpha[t % 16]);
    V16 acc[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) acc[b] = V16::zero();
    for (int64_t i = 0; i < dk; ++i) {
      float* row = Sh + i * dv + c0;
      const V16 ki = V16::bcast(kt[i]);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) {
        const V16 s = load_n(row + 16 * b, lanes(b)) * a;
        store_n(s, row + 16 * b, lanes(b));
        acc[b] = V16::fma(s, ki, acc[b]);
      }
    }
    const V16 bt = V16::bcast(beta[t * nv + h]);
    const float* vt = v + t * ldv + h * dv + c0;
    V16 delta[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) {
      delta[b] = bt * (load_n(vt + 16 * b, lanes(b)) - acc[b]);
      acc[b] = V16::zero();
    }
    for (int64_t i = 0; i < dk; ++i) {
      float* row = Sh + i * dv + c0;
      const V16 ki = V16::bcast(kt[i]);
      const V16 qi = V16::bcast(qt[i]);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) {
        const V16 s = V16::fma(ki, delta[b], load_n(row + 16 * b, lanes(b)));
        store_n(s, row + 16 * b, lanes(b));
        acc[b] = V16::fma(s, qi, acc[b]);
      }
    }
    float* ot = o + t * ldo + h * dv + c0;
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) store_n(acc[b], ot + 16 * b, lanes(b));
  }
}

inline void gdn_columns(const GdnDims& dims, int64_t h, int64_t j0, int64_t j1, int64_t T,
                        const float* q, int64_t ldq, const float* k, int64_t ldk, const float* v,
                        int64_t ldv, const float* beta, const float* g, float* S, float* o,
                        int64_t ldo) {
  float* Sh = S + h * dims.d_k * dims.d_v;
  int64_t c = j0;
  if (T == 1) {
    for (; c + 16 * kGdnDecodeVectors <= j1; c += 16 * kGdnDecodeVectors) {
      gdn_column_block<kGdnDecodeVectors, true>(dims, h, c, 16, T, q, ldq, k, ldk, v, ldv, beta, g,
                                                Sh, o, ldo);
    }
  }
  for (; c + 16 * kGdnVectors <= j1; c += 16 * kGdnVectors) {
    gdn_column_block<kGdnVectors, true>(dims, h, c, 16, T, q, ldq, k, ldk, v, ldv, beta, g, Sh, o,
                                        ldo);
  }
  for (; c < j1; c += 16) {
    const int last = j1 - c < 16 ? int(j1 - c) : 16;
    gdn_column_block<1, false>(dims, h, c, last, T, q, ldq, k, ldk, v, ldv, beta, g, Sh, o, ldo);
  }
}

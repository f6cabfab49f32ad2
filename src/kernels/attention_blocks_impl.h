// The register-tiled block kernels of the attention (kernels/attention_impl.h has the tile
// driver and the order of operations): scores of a key block for a group of rows, and the
// P·V update of a group of rows. Compiled once per ISA inside its namespace by
// kernels/attention_{scalar,avx2,avx512}.cc after kernels/simd/v16.h, kernels/attention.h and
// kernels/attention_job.h. Includes nothing and uses no std:: templates (attention_job.h).
//
// Template parameters NR (rows), NB (key blocks), NC (16-lane column vectors) only choose
// which rows share a loaded K or V vector: every output element is the same chain whatever
// they are, so a row gets the bits it would get alone.

struct AttnRow {
  const float* q;  // [D]
  float* out;      // [D]
  int64_t pos;     // attends cache rows [0, pos]
};

inline V16 attn_load(const float* p) {
  return V16::load(p);
}
inline V16 attn_load(const uint16_t* p) {
  return V16::load_bf16(p);
}
// 32 keys (or columns) as two V16 in the pair order of the K/V type: element order for f32,
// V16::load_bf16_pairs's order for bf16 (no widening across lanes). A value's lane never
// changes the operations it takes part in, only where it sits: attn_store32 and attn_load32f
// translate between element order and the pair order of KT.
inline void attn_load32(const float* p, V16& lo, V16& hi) {
  lo = V16::load(p);
  hi = V16::load(p + 16);
}
inline void attn_load32(const uint16_t* p, V16& lo, V16& hi) {
  V16::load_bf16_pairs(p, lo, hi);
}
template <typename KT>
inline void attn_store32(V16 lo, V16 hi, float* p) {
  if constexpr (sizeof(KT) == 4) {
    lo.store(p);
    hi.store(p + 16);
  } else {
    V16::store_pairs(lo, hi, p);
  }
}
template <typename KT>
inline void attn_load32f(const float* p, V16& lo, V16& hi) {
  if constexpr (sizeof(KT) == 4) {
    lo = V16::load(p);
    hi = V16::load(p + 16);
  } else {
    V16::load_pairs(p, lo, hi);
  }
}
inline V16 attn_load_partial(const float* p, int n) {
  return V16::load_partial(p, n);
}
inline V16 attn_load_partial(const uint16_t* p, int n) {
  return V16::load_bf16_partial(p, n);
}

// Step 1 for NR rows: s[r][j] = scale · (FMA chain over d of q_r[d] · K[d][j0 + j]), j < 32.
// kb is K of the KV head at column j0. n_load < 32 only in the block that crosses the cache's
// capacity: the keys past it read as +0 and are masked later (they lie past every position).
template <int NR, typename KT>
inline void score_tile(const AttnRow* rows, const KT* kb, int64_t cap, int64_t D, int n_load,
                       float scale, float* s, int64_t pf) {
  V16 acc0[NR], acc1[NR];
  const float* q[NR];
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
    acc0[r] = V16::zero();
    acc1[r] = V16::zero();
    q[r] = rows[r].q;
  }
  if (n_load == kKeyBlock) {
    for (int64_t d = 0; d < D; ++d) {
      const KT* kr = kb + d * cap;
      if (pf) {
        __builtin_prefetch(kr + pf);
        if (sizeof(KT) == 4) __builtin_prefetch(kr + pf + 16);
      }
      V16 k0, k1;
      attn_load32(kr, k0, k1);
#pragma GCC unroll 16
      for (int r = 0; r < NR; ++r) {
        const V16 qd = V16::bcast(q[r][d]);
        acc0[r] = V16::fma(qd, k0, acc0[r]);
        acc1[r] = V16::fma(qd, k1, acc1[r]);
      }
    }
    const V16 sc = V16::bcast(scale);
#pragma GCC unroll 16
    for (int r = 0; r < NR; ++r) attn_store32<KT>(acc0[r] * sc, acc1[r] * sc, s + r * kKeyBlock);
    return;
  } else {
    const int n0 = n_load < 16 ? n_load : 16, n1 = n_load > 16 ? n_load - 16 : 0;
    for (int64_t d = 0; d < D; ++d) {
      const KT* kr = kb + d * cap;
      const V16 k0 = attn_load_partial(kr, n0), k1 = attn_load_partial(kr + 16, n1);
#pragma GCC unroll 16
      for (int r = 0; r < NR; ++r) {
        const V16 qd = V16::bcast(q[r][d]);
        acc0[r] = V16::fma(qd, k0, acc0[r]);
        acc1[r] = V16::fma(qd, k1, acc1[r]);
      }
    }
  }
  const V16 sc = V16::bcast(scale);
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
    (acc0[r] * sc).store(s + r * kKeyBlock);
    (acc1[r] * sc).store(s + r * kKeyBlock + 16);
  }
}

// score_tile over n rows: groups of NR, the rest with smaller groups. Only the first group
// prefetches (pf: how many keys ahead, 0 for none), so each K line is requested once.
template <int NR, typename KT>
inline void score_rows(const AttnRow* rows, int n, const KT* kb, int64_t cap, int64_t D, int n_load,
                       float scale, float* s, int64_t pf) {
  int r = 0;
  for (; r + NR <= n; r += NR)
    score_tile<NR>(rows + r, kb, cap, D, n_load, scale, s + r * kKeyBlock, r == 0 ? pf : 0);
  if constexpr (NR > 1) {
    if (r < n) {
      score_rows<NR - 1>(rows + r, n - r, kb, cap, D, n_load, scale, s + r * kKeyBlock,
                         r == 0 ? pf : 0);
    }
  }
}

// Step 1 for NR rows and NB consecutive full blocks from kb, for tiles of a few rows (decode):
// one pass over d then reads NB·32 contiguous keys of each K row instead of 32, which the
// memory serves far better. Block i of row r goes to s + i * plane + r * 32. Every score is
// the same FMA chain as in score_tile.
template <int NR, int NB, typename KT>
inline void score_wide(const AttnRow* rows, const KT* kb, int64_t cap, int64_t D, float scale,
                       float* s, int64_t plane, int64_t pf) {
  V16 acc[NR][2 * NB];
  const float* q[NR];
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < 2 * NB; ++i) acc[r][i] = V16::zero();
    q[r] = rows[r].q;
  }
  for (int64_t d = 0; d < D; ++d) {
    const KT* kr = kb + d * cap;
    if (pf) {
#pragma GCC unroll 16
      for (int i = 0; i < 2 * NB; i += 64 / (16 * int(sizeof(KT))))
        __builtin_prefetch(kr + pf + 16 * i, 0, 2);
    }
    V16 k[2 * NB];
#pragma GCC unroll 16
    for (int i = 0; i < NB; ++i) attn_load32(kr + 32 * i, k[2 * i], k[2 * i + 1]);
#pragma GCC unroll 16
    for (int r = 0; r < NR; ++r) {
      const V16 qd = V16::bcast(q[r][d]);
#pragma GCC unroll 16
      for (int i = 0; i < 2 * NB; ++i) acc[r][i] = V16::fma(qd, k[i], acc[r][i]);
    }
  }
  const V16 sc = V16::bcast(scale);
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < NB; ++i)
      attn_store32<KT>(acc[r][2 * i] * sc, acc[r][2 * i + 1] * sc, s + i * plane + r * kKeyBlock);
  }
}

// score_wide over n rows: groups of NR, the rest with smaller groups; the first prefetches.
template <int NR, int NB, typename KT>
inline void score_wide_rows(const AttnRow* rows, int n, const KT* kb, int64_t cap, int64_t D,
                            float scale, float* s, int64_t plane, int64_t pf) {
  int r = 0;
  for (; r + NR <= n; r += NR)
    score_wide<NR, NB>(rows + r, kb, cap, D, scale, s + r * kKeyBlock, plane, r == 0 ? pf : 0);
  if constexpr (NR > 1) {
    if (r < n) {
      score_wide_rows<NR - 1, NB>(rows + r, n - r, kb, cap, D, scale, s + r * kKeyBlock, plane,
                                  r == 0 ? pf : 0);
    }
  }
}

// Step 8 for NR rows, columns [c0, c0 + 16 * NC) and keys [j0, j0 + n): o[c] = o[c] · alpha,
// then o[c] = fma(p_j, V[j][c], o[c]) for j ascending. o: rows of D floats, D apart; p: rows of
// 32 floats; vb: V row j0.
// With an even NC the columns go in 32s in the pair order of KT (attn_load32): o is read into
// that order and written back out of it, one permute per 16 columns per row of the block,
// where V's bf16 loads save one per 16 columns per key.
template <int NR, int NC, typename KT>
inline void pv_tile(float* o, int64_t D, int64_t c0, const float* p, const float* alpha,
                    const KT* vb, int n, int64_t pf) {
  constexpr bool kPairs = NC % 2 == 0;
  V16 acc[NR][NC];
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
    const V16 a = V16::bcast(alpha[r]);
    if constexpr (kPairs) {
#pragma GCC unroll 16
      for (int c = 0; c < NC; c += 2) {
        attn_load32f<KT>(o + r * D + c0 + 16 * c, acc[r][c], acc[r][c + 1]);
        acc[r][c] = acc[r][c] * a;
        acc[r][c + 1] = acc[r][c + 1] * a;
      }
    } else {
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) acc[r][c] = V16::load(o + r * D + c0 + 16 * c) * a;
    }
  }
  for (int j = 0; j < n; ++j) {
    const KT* vr = vb + j * D + c0;
    if (pf) {
#pragma GCC unroll 16
      for (int c = 0; c < NC; c += 64 / (16 * int(sizeof(KT))))
        __builtin_prefetch(vr + pf * D + 16 * c, 0, 2);
    }
    V16 v[NC];
    if constexpr (kPairs) {
#pragma GCC unroll 16
      for (int c = 0; c < NC; c += 2) attn_load32(vr + 16 * c, v[c], v[c + 1]);
    } else {
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) v[c] = attn_load(vr + 16 * c);
    }
#pragma GCC unroll 16
    for (int r = 0; r < NR; ++r) {
      const V16 pj = V16::bcast(p[r * kKeyBlock + j]);
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) acc[r][c] = V16::fma(pj, v[c], acc[r][c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
    if constexpr (kPairs) {
#pragma GCC unroll 16
      for (int c = 0; c < NC; c += 2)
        attn_store32<KT>(acc[r][c], acc[r][c + 1], o + r * D + c0 + 16 * c);
    } else {
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) acc[r][c].store(o + r * D + c0 + 16 * c);
    }
  }
}

// pv_tile over n_rows rows and columns [c0, c0 + 16 * NC): groups of NR, the rest with smaller
// groups; the first group prefetches pf keys ahead (0: none).
template <int NR, int NC, typename KT>
inline void pv_rows_chunk(float* o, int64_t D, int64_t c0, const float* p, const float* alpha,
                          int n_rows, const KT* vb, int n, int64_t pf) {
  int r = 0;
  for (; r + NR <= n_rows; r += NR)
    pv_tile<NR, NC>(o + r * D, D, c0, p + r * kKeyBlock, alpha + r, vb, n, r == 0 ? pf : 0);
  if constexpr (NR > 1) {
    if (r < n_rows) {
      pv_rows_chunk<NR - 1, NC>(o + r * D, D, c0, p + r * kKeyBlock, alpha + r, n_rows - r, vb, n,
                                r == 0 ? pf : 0);
    }
  }
}

// Step 8 for n_rows rows: column chunks outer, so a chunk of the V block (32 x 16·NC) stays in
// L1 while every row group reads it. NC halves until it divides D / 16.
template <int NR, int NC, typename KT>
inline void pv_rows(float* o, int64_t D, const float* p, const float* alpha, int n_rows,
                    const KT* vb, int n, int64_t pf) {
  if constexpr (NC > 1) {
    if (D % (16 * NC) != 0) return pv_rows<NR, NC / 2>(o, D, p, alpha, n_rows, vb, n, pf);
  }
  for (int64_t c0 = 0; c0 < D; c0 += 16 * NC)
    pv_rows_chunk<NR, NC>(o, D, c0, p, alpha, n_rows, vb, n, pf);
}

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
      const V16 k0 = attn_load(kr), k1 = attn_load(kr + 16);
#pragma GCC unroll 16
      for (int r = 0; r < NR; ++r) {
        const V16 qd = V16::bcast(q[r][d]);
        acc0[r] = V16::fma(qd, k0, acc0[r]);
        acc1[r] = V16::fma(qd, k1, acc1[r]);
      }
    }
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
        __builtin_prefetch(kr + pf + 16 * i);
    }
    V16 k[2 * NB];
#pragma GCC unroll 16
    for (int i = 0; i < 2 * NB; ++i) k[i] = attn_load(kr + 16 * i);
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
    for (int i = 0; i < 2 * NB; ++i)
      (acc[r][i] * sc).store(s + (i / 2) * plane + r * kKeyBlock + (i % 2) * 16);
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
template <int NR, int NC, typename KT>
inline void pv_tile(float* o, int64_t D, int64_t c0, const float* p, const float* alpha,
                    const KT* vb, int n, int64_t pf) {
  V16 acc[NR][NC];
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
    const V16 a = V16::bcast(alpha[r]);
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) acc[r][c] = V16::load(o + r * D + c0 + 16 * c) * a;
  }
  for (int j = 0; j < n; ++j) {
    const KT* vr = vb + j * D + c0;
    if (pf) {
#pragma GCC unroll 16
      for (int c = 0; c < NC; c += 64 / (16 * int(sizeof(KT))))
        __builtin_prefetch(vr + pf * D + 16 * c);
    }
    V16 v[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) v[c] = attn_load(vr + 16 * c);
#pragma GCC unroll 16
    for (int r = 0; r < NR; ++r) {
      const V16 pj = V16::bcast(p[r * kKeyBlock + j]);
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) acc[r][c] = V16::fma(pj, v[c], acc[r][c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) acc[r][c].store(o + r * D + c0 + 16 * c);
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

// The attention tile driver over V16 (contract and order of operations: kernels/attention.h),
// compiled once per ISA inside its namespace by kernels/attention_{scalar,avx2,avx512}.cc,
// after kernels/exp_impl.h and kernels/attention_blocks_impl.h (the block kernels it calls).
// Includes nothing and uses no std:: templates (attention_job.h).
//
// A tile is up to kAttnMaxTileRows query rows (positions x the query heads of one KV head),
// ordered by position. For each key block b the tile computes the scores of every row that
// still needs b (kSR rows share each loaded K vector; a tile of few rows scores kDB blocks per
// pass, kDR rows at a time), then each row's softmax step, then the P·V update (kPR rows x kPC
// column vectors share each loaded V vector). The register blocking is picked per ISA for its
// register file; it decides which rows share a load, never the operations a row performs, so
// every row gets the bits it would get alone.

// Lane indices of a key block, for the masks of a diagonal block.
alignas(64) static const
    float kAttnIota[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                           16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

// One tile: rows ordered by position (non-decreasing), Kh / Vh the cache of their KV head.
template <int kSR, int kPR, int kPC, int kDR, int kDB, typename KT>
void attend_tile(const AttentionJob& job, const AttnRow* rows, int n_rows, const KT* Kh,
                 const KT* Vh, float* scratch) {
  const int64_t D = job.D, cap = job.capacity;
  // The scratch (kAttnScratchFloats, 64-byte aligned), every part 64-byte aligned.
  float* o = scratch;                                  // output accumulators [rows][D]
  float* s = o + kAttnMaxTileRows * kAttnMaxD;         // scores, then p [rows][32]
  float* lane_max = s + kAttnMaxTileRows * kKeyBlock;  // max(s[0..15], s[16..31]) [rows][16]
  float* l16 = lane_max + kAttnMaxTileRows * 16;       // the softmax denominator [rows][16]
  float* m = l16 + kAttnMaxTileRows * 16;              // running max [rows]
  float* m_new = m + kAttnMaxTileRows;
  float* alpha = m_new + kAttnMaxTileRows;
  int64_t last[kAttnMaxTileRows];  // each row's diagonal block
  for (int r = 0; r < n_rows; ++r) {
    m[r] = -__builtin_inff();
    V16::zero().store(l16 + r * 16);
    last[r] = rows[r].pos / kKeyBlock;
    for (int64_t i = 0; i < D; ++i) o[r * D + i] = 0.0f;
  }
  const V16 iota0 = V16::load(kAttnIota), iota1 = V16::load(kAttnIota + 16);
  const V16 ninf = V16::bcast(-__builtin_inff()), zero = V16::zero();
  // Software prefetch of later K and V blocks: the hardware cannot follow K's D strided rows.
  // A large tile spends thousands of cycles on a block, so the next one is far enough ahead;
  // a decode tile (a few rows) must look further to cover the memory latency. The decode
  // scores' K lines and every tile's V lines go into L2 (prefetcht1), not L1: on a Zen 4 a
  // 0.8B decode's attention took 0.61 instead of 0.88 ms a token at 1k and 4.1 instead of 6.4
  // at 8k with bf16 K/V (docs/kernels.md "Attention"), more lines in flight than L1's miss
  // buffers hold (as the GEMM tiles', kernels/simd/prefetch.h).
  const bool few_rows = n_rows < kAttnWideMaxRows;
  const int64_t pf = kKeyBlock * (few_rows ? kAttnDecodePrefetchBlocks : 1);
  // A tile of few rows scores kDB blocks at a time (score_wide) while every active row needs
  // all of them whole; block b's scores are then plane b - wide_b0 of s.
  int64_t wide_b0 = 0, wide_end = 0;
  constexpr int64_t kPlane = kAttnWideMaxRows * kKeyBlock;
  static_assert(kDB * kPlane <= kAttnMaxTileRows * kKeyBlock, "planes fit the score scratch");

  // Rows [r_begin, n_rows) still need block b; of those, [r_begin, r_full) end in it (their
  // diagonal block: only keys <= pos count) and [r_full, n_rows) take all 32 keys.
  int r_begin = 0;
  const int64_t b_end = rows[n_rows - 1].pos / kKeyBlock;  // the latest row's diagonal block
  for (int64_t b = 0; b <= b_end; ++b) {
    while (last[r_begin] < b) ++r_begin;
    int r_full = r_begin;
    while (r_full < n_rows && last[r_full] == b) ++r_full;
    const int64_t j0 = b * kKeyBlock;
    const int n_load = cap - j0 < kKeyBlock ? int(cap - j0) : int(kKeyBlock);
    float* sb = s;  // block b's scores: row r at sb + r * 32
    if (kDB > 1 && few_rows && b >= wide_end && b + kDB - 1 < last[r_begin]) {
      wide_b0 = b;
      wide_end = b + kDB;
      score_wide_rows<kDR, kDB>(rows + r_begin, n_rows - r_begin, Kh + j0, cap, D, job.scale,
                                s + r_begin * kKeyBlock, kPlane, pf);
    }
    if (b < wide_end) {
      sb = s + (b - wide_b0) * kPlane;
    } else {
      score_rows<kSR>(rows + r_begin, n_rows - r_begin, Kh + j0, cap, D, n_load, job.scale,
                      s + r_begin * kKeyBlock, pf);
    }

    // Steps 2-4: masked lanes are -inf for the max; m_new = max(m, block max).
    for (int r = r_begin; r < n_rows; ++r) {
      V16 s0 = V16::load(sb + r * kKeyBlock), s1 = V16::load(sb + r * kKeyBlock + 16);
      if (r < r_full) {
        const V16 nv = V16::bcast(float(rows[r].pos - j0 + 1));
        s0 = V16::select_lt(iota0, nv, s0, ninf);
        s1 = V16::select_lt(iota1, nv, s1, ninf);
      }
      V16::max(s0, s1).store(lane_max + r * 16);
    }
    // The fold of V16::reduce_max (lanes in order, t > m ? t : m), written out over a row stored
    // a loop earlier: no store-to-load stall, and the rows' chains overlap.
    for (int r = r_begin; r < n_rows; ++r) {
      const float* t = lane_max + r * 16;
      float bm = t[0];
      for (int i = 1; i < 16; ++i) bm = t[i] > bm ? t[i] : bm;
      m_new[r] = bm > m[r] ? bm : m[r];
    }
    // Step 5: alpha = exp(m - m_new), 16 rows a vector (a lane-wise op: the same bits as one
    // row at a time). The first block has m = -inf, so alpha = +0.
    for (int r = r_begin; r < n_rows; r += 16) {
      const int c = n_rows - r < 16 ? n_rows - r : 16;
      exp_v(V16::load_partial(m + r, c) - V16::load_partial(m_new + r, c))
          .store_partial(alpha + r, c);
    }
    // Steps 6-7: p = exp(s - m_new), masked lanes +0; l16 = l16 · alpha + (p_lo + p_hi).
    for (int r = r_begin; r < n_rows; ++r) {
      float* sr = sb + r * kKeyBlock;
      const V16 mn = V16::bcast(m_new[r]);
      V16 p0 = exp_v(V16::load(sr) - mn), p1 = exp_v(V16::load(sr + 16) - mn);
      if (r < r_full) {
        const V16 nv = V16::bcast(float(rows[r].pos - j0 + 1));
        p0 = V16::select_lt(iota0, nv, p0, zero);
        p1 = V16::select_lt(iota1, nv, p1, zero);
      }
      p0.store(sr);
      p1.store(sr + 16);
      (V16::load(l16 + r * 16) * V16::bcast(alpha[r]) + (p0 + p1)).store(l16 + r * 16);
      m[r] = m_new[r];
    }
    // Step 8. A diagonal row reads V only for its valid keys: rows past its position may hold
    // anything (stale or not yet written), and even 0 · V would let a NaN or a -0.0 through.
    const KT* vb = Vh + j0 * D;
    for (int r = r_begin; r < r_full; ++r) {
      pv_rows<1, kPC>(o + r * D, D, sb + r * kKeyBlock, alpha + r, 1, vb, int(rows[r].pos - j0 + 1),
                      0);
    }
    pv_rows<kPR, kPC>(o + r_full * D, D, sb + r_full * kKeyBlock, alpha + r_full, n_rows - r_full,
                      vb, int(kKeyBlock), pf);
  }
  // out = o / l, l = reduce_add(l16).
  for (int r = 0; r < n_rows; ++r) {
    const V16 lv = V16::bcast(V16::load(l16 + r * 16).reduce_add());
    for (int64_t i = 0; i < D; i += 16) (V16::load(o + r * D + i) / lv).store(rows[r].out + i);
  }
}

// The rows t in [t0, t1) of every query head of KV head g: positions outer, heads inner, so
// the tile is ordered by position.
template <int kSR, int kPR, int kPC, int kDR, int kDB>
void attention_tile_impl(const AttentionJob& job, int64_t g, int64_t t0, int64_t t1,
                         float* scratch) {
  const int64_t D = job.D, G = job.n_q / job.n_kv;
  AttnRow rows[kAttnMaxTileRows];
  int n = 0;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t h = g * G; h < (g + 1) * G; ++h) {
      rows[n++] = {job.q + t * job.ldq + h * D, job.out + t * job.ldo + h * D, job.pos0 + t};
    }
  }
  const int64_t head = g * D * job.capacity;  // same element offset in K and V
  if (job.bf16) {
    attend_tile<kSR, kPR, kPC, kDR, kDB>(job, rows, n, static_cast<const uint16_t*>(job.K) + head,
                                         static_cast<const uint16_t*>(job.V) + head, scratch);
  } else {
    attend_tile<kSR, kPR, kPC, kDR, kDB>(job, rows, n, static_cast<const float*>(job.K) + head,
                                         static_cast<const float*>(job.V) + head, scratch);
  }
}

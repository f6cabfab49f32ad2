// The integer-dot GEMM (kernels/quant_dot.h) for AVX2 (also the path of an AVX-512 CPU without
// VNNI; gemm_int8_vnni.cc has its own in-place kernels), compiled into gemm_int8_avx2.cc.
// Include it inside the ISA file's anonymous namespace, after <immintrin.h>, <cstdint>,
// kernels/gemm_job.h and:
//   constexpr int kInt8Mr;                 rows of one register tile
//   constexpr bool kFlipQ8;                store Q8_0 quants as w ^ 0x80 (unsigned, for vpdpbusd)
//   Q8Tile pick_q8_0(int rows);            the Q8_0 tile of `rows` <= kInt8Mr rows
//   lane_mask8(n), load_i32(p)             an 8-lane store mask, an unaligned int32 load
//
// A block of several rows walks its panels one at a time and K in chunks: a chunk of a panel
// is first repacked into a small stack buffer (the codes of 4 consecutive inputs of a lane side
// by side, as the panel's quads hold their bytes (kernels/panel_layout.h), so one 32-bit lane
// holds the 4 bytes vpmaddubsw+vpmaddwd multiply with 4 activation bytes; the f16 scales as
// f32), then every row tile of the block runs over the buffer (in L1). A block of one row
// (decode) reuses no repack, so for every type it reads the panels in place (the
// *_row_in_place functions: the quads straight into the multiplies). Each tile computes, per
// output, the integer block sums exactly and combines them into the float accumulator in block
// order with the ops scalar spells out (gemm_scalar.cc int8_q8_0): the partial sums pass through y
// between chunks (an f32 store/load is exact). So rows, tiles, chunks, the one-row paths and
// threads change nothing in a result, and every ISA gives the scalar bits. (No #includes here: the
// file is included inside a namespace.)
#pragma once

#include "kernels/simd/prefetch.h"

// mw: the blocks' mins (Q4_1, Q5_1: the step acc = fma(float(a_sum), m * dx, acc) after each
// block's), else nullptr.
using Q8Tile = void (*)(const uint8_t* wt, const float* dw, const float* mw, int nb,
                        const uint8_t* xrow, int64_t ldq, int64_t xd_off, int64_t xs_off,
                        int64_t kb0, float* y, int64_t ldy, bool first, int64_t n_cols);
Q8Tile pick_q8_0(int rows);  // defined by the ISA file
// The same tile over repack_q4_32's unsigned codes of Q4_0, Q4_1, Q5_0 or Q5_1 (`type`: a
// core::DType), the same integer sums; defined by the ISA file.
Q8Tile pick_q4_32_unsigned(int type, int rows);

// A repacked Q4_K k block of one panel: the nibbles of sub-block j, inputs 4g .. 4g+3 of the
// 32 lanes, at q[j][g] (lane l's 4 bytes at 4l); the sub-blocks' scales and mins as int32; d and
// dmin as f32. Q5_K's repack holds its 5-bit codes; IQ4_XS's its signed levels, ls - 32 as sc,
// and no mins.
struct Q4KRepacked {
  alignas(64) uint8_t q[8][8][128];
  alignas(64) int32_t sc[8][32];
  alignas(64) int32_t mn[8][32];
  alignas(64) float d[32];
  alignas(64) float dmin[32];
};
using Q4KTile = void (*)(const Q4KRepacked& w, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
                         int64_t xs_off, int64_t kb, float* y, int64_t ldy, bool first,
                         int64_t n_cols);
Q4KTile pick_q4_k(int rows);    // defined by the ISA file (also Q5_K's)
Q4KTile pick_iq4_xs(int rows);  // defined by the ISA file

// A repacked Q6_K k block of one panel: the unsigned 6-bit codes of sub-block j (16 inputs),
// inputs 4g .. 4g+3 of the 32 lanes, at q[j][g]; the int8 scales as int32; d as f32. Q3_K's
// repack holds its unsigned 3-bit codes (stored + 4) and sc - 32; Q2_K's its 2-bit codes, scales,
// mins (mn) and dmin.
struct Q6KRepacked {
  alignas(64) uint8_t q[16][4][128];
  alignas(64) int32_t sc[16][32];
  alignas(64) int32_t mn[16][32];
  alignas(64) float d[32];
  alignas(64) float dmin[32];
};
using Q6KTile = void (*)(const Q6KRepacked& w, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
                         int64_t xs_off, int64_t kb, float* y, int64_t ldy, bool first,
                         int64_t n_cols);
Q6KTile pick_q6_k(int rows);  // defined by the ISA file
Q6KTile pick_q3_k(int rows);  // defined by the ISA file
Q6KTile pick_q2_k(int rows);  // defined by the ISA file

// Q8_0 blocks per repacked chunk: 8 KiB of quants + 1 KiB of scales, in L1 with the rows'
// activations.
constexpr int kQ8Chunk = 8;

// A quad of a panel's k block (kernels/panel_layout.h: lane l's 4 bytes at 4l) -> lanes 0-7,
// 8-15, 16-23, 24-31, each 32-bit lane the 4 bytes vpmaddubsw + vpmaddwd multiply with 4
// activation bytes.
ANCHORAGE_FORCE_INLINE void load_quad(const uint8_t* q, __m256i* v) {
  v[0] = _mm256_loadu_si256((const __m256i*)q);  // (a loop here kept v on the stack)
  v[1] = _mm256_loadu_si256((const __m256i*)(q + 32));
  v[2] = _mm256_loadu_si256((const __m256i*)(q + 64));
  v[3] = _mm256_loadu_si256((const __m256i*)(q + 96));
}

// Lanes 16h .. 16h + 15 of a quad (h = kHigh): load_quad's registers 2h and 2h + 1.
template <bool kHigh>
ANCHORAGE_FORCE_INLINE void load_quad_half(const uint8_t* q, __m256i* v) {
  v[0] = _mm256_loadu_si256((const __m256i*)(q + 64 * kHigh));
  v[1] = _mm256_loadu_si256((const __m256i*)(q + 64 * kHigh + 32));
}

// 32 bytes in lane order (a scale, min or offset byte per lane) with their 32-bit groups
// reordered: lanes 0-3, 8-11, 16-19, 24-27 in the low half, 4-7, 12-15, 20-23, 28-31 in the
// high, the "scale order" bytes_dup16 and add_lane_pair_sums take, so that their in-half byte
// shuffles give the lanes of load_quad's registers, in order.
ANCHORAGE_FORCE_INLINE __m256i bytes_for_lane_order(__m256i bytes) {
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

// A byte per lane in scale order (bytes_for_lane_order) -> lanes 8c .. 8c + 7 (load_quad's
// register c), each byte as the int16 pair (x, x) of its 32-bit lane, unsigned or (kSigned)
// sign-extended: one vpmaddwd then multiplies both 16-bit sums of a lane by it
// (x * a + x * b = x * (a + b), exact in int32).
template <int c, bool kSigned = false>
ANCHORAGE_FORCE_INLINE __m256i bytes_dup16(__m256i bytes) {
  constexpr char z = char(0x80), b0 = char(4 * c), b1 = char(4 * c + 1), b2 = char(4 * c + 2),
                 b3 = char(4 * c + 3);
  __m256i ctl = _mm256_setr_epi8(b0, z, b0, z, b1, z, b1, z, b2, z, b2, z, b3, z, b3, z, b0, z, b0,
                                 z, b1, z, b1, z, b2, z, b2, z, b3, z, b3, z);
  // Signed: the byte into the high half of its 16 bits, then shifted down with its sign.
  if (kSigned) ctl = _mm256_or_si256(_mm256_slli_si256(ctl, 1), _mm256_set1_epi16(0x80));
  const __m256i d = _mm256_shuffle_epi8(bytes, ctl);
  return kSigned ? _mm256_srai_epi16(d, 8) : d;
}

// The 32 lanes' f16 at byte rows lo and lo + 32 of a byte-interleaved block, as f32 (exact;
// vcvtph2ps quiets a signalling NaN, which the multiply it then enters would do anyway).
ANCHORAGE_FORCE_INLINE void scales_f16(const uint8_t* lo, float* out) {
  const __m256i a = _mm256_loadu_si256((const __m256i*)lo);
  const __m256i b = _mm256_loadu_si256((const __m256i*)(lo + 32));
  const __m256i l = _mm256_unpacklo_epi8(a, b);  // lanes 0-7 | 16-23
  const __m256i u = _mm256_unpackhi_epi8(a, b);  // lanes 8-15 | 24-31
  const __m256i h0 = _mm256_permute2x128_si256(l, u, 0x20);
  const __m256i h1 = _mm256_permute2x128_si256(l, u, 0x31);
  _mm256_store_ps(out, _mm256_cvtph_ps(_mm256_castsi256_si128(h0)));
  _mm256_store_ps(out + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(h0, 1)));
  _mm256_store_ps(out + 16, _mm256_cvtph_ps(_mm256_castsi256_si128(h1)));
  _mm256_store_ps(out + 24, _mm256_cvtph_ps(_mm256_extracti128_si256(h1, 1)));
}

// IQ4_NL's and IQ4_XS's 16 levels, in each 128-bit lane (vpshufb).
ANCHORAGE_FORCE_INLINE __m256i iq4_table() {
  return _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                          -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}

// The vpmaddubsw pair sums a_2i w_2i + a_2i+1 w_2i+1 of signed weights w and activations a
// (abs_a = |a|, a's bytes at most 127 in magnitude), as |a| x (w with a's sign): |a| is taken
// once per broadcast activation instead of |w| once per weight vector. Exact while |w| <= 127
// (IQ4's levels; a Q8_0 weight of -128 would wrap in vpsignb, so Q8_0 takes |w| x (a with w's
// sign)); a pair sums at most 2 x 127 x 127 < 2^15.
ANCHORAGE_FORCE_INLINE __m256i signed_pair_sums(__m256i abs_a, __m256i a, __m256i w) {
  return _mm256_maddubs_epi16(abs_a, _mm256_sign_epi8(w, a));
}

// nb Q8_0 k blocks of a panel (34 byte rows of 32 lanes each) -> wt [nb][8][128] (the quads of
// 4 inputs) and dw [nb][32].
inline void repack_q8_0(const uint8_t* blocks, int nb, uint8_t* wt, float* dw) {
  for (int b = 0; b < nb; ++b) {
    const uint8_t* blk = blocks + b * 32 * 34;
    prefetch_part<kToL1>(blocks + kQ8Chunk * 32 * 34, kQ8Chunk * 32 * 34, kQ8Chunk, b);
    scales_f16(blk, dw + b * 32);
    for (int g = 0; g < 8; ++g) {  // the quads as they are (kFlipQ8: as w ^ 0x80)
      __m256i v[4];
      load_quad(blk + (2 + 4 * g) * 32, v);
      for (int c = 0; c < 4; ++c) {
        if (kFlipQ8) v[c] = _mm256_xor_si256(v[c], _mm256_set1_epi8(char(0x80)));
        _mm256_store_si256((__m256i*)(wt + b * 1024 + g * 128 + 32 * c), v[c]);
      }
    }
  }
}

// Per byte of quad g (lane l's 4 bytes: inputs 4g .. 4g + 3 of a 32-block), 0x10
// where the input's fifth bit is set: from qh, each lane's u32 of fifth bits (bit e for input
// e; kHigh: inputs 16 + 4g ..), its byte replicated over the lane's 4 bytes (vpshufb inside
// 128-bit halves), one bit per byte tested.
template <bool kHigh>
ANCHORAGE_FORCE_INLINE __m256i q5_0_fifth_bits(__m256i qh, int g) {
  const __m256i sel = _mm256_add_epi8(_mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0c0c0c0c, 0,
                                                        0x04040404, 0x08080808, 0x0c0c0c0c),
                                      _mm256_set1_epi8(char((kHigh ? 2 : 0) + g / 2)));
  const __m256i bits = _mm256_set1_epi32(g % 2 ? int(0x80402010) : 0x08040201);
  const __m256i r = _mm256_and_si256(_mm256_shuffle_epi8(qh, sel), bits);
  return _mm256_and_si256(_mm256_cmpeq_epi8(r, bits), _mm256_set1_epi8(0x10));
}

// The layout of the 32-blocks Q4_0, IQ4_NL, Q5_0, Q4_1, Q5_1: byte row of the u32 of fifth
// bits (Q5_x), of the first quant row, block bytes; whether the block has a min (row 2).
template <int kType>
struct Q4x32 {
  static constexpr bool kIq4 = kType == int(core::DType::kIQ4_NL);
  static constexpr bool kMin = kType == int(core::DType::kQ4_1) || kType == int(core::DType::kQ5_1);
  static constexpr bool kQ5 = kType == int(core::DType::kQ5_0) || kType == int(core::DType::kQ5_1);
  static constexpr int kQh = kMin ? 4 : 2, kQs = kQh + (kQ5 ? 4 : 0), kBlockBytes = kQs + 16;
  // What the signed code is below the unsigned one (0 with a min).
  static constexpr int kOffset = kMin ? 0 : kQ5 ? 16 : 8;
};

// nb Q4_0, IQ4_NL, Q5_0, Q4_1 or Q5_1 k blocks of a panel (Q4x32's byte rows: f16 d, the f16 min
// for Q4_1 / Q5_1, the u32 of fifth bits for Q5_x, then 16 rows whose low / high nibbles are
// inputs e / 16 + e) -> the Q8_0 repack's layout, as IQ4_NL's signed table levels (the Q8_0 tile
// multiplies them unchanged) or the other types' unsigned codes (q, Q5_x's q | fifth bit << 4;
// pick_q4_32_unsigned's tile takes Q4_0's 8 and Q5_0's 16 off), and the mins into mw.
template <int kType>
inline void repack_q4_32(const uint8_t* blocks, int nb, uint8_t* wt, float* dw, float* mw) {
  using L = Q4x32<kType>;
  constexpr bool kIq4 = L::kIq4, kQ5 = L::kQ5;
  constexpr int kBlockBytes = L::kBlockBytes, kQs = L::kQs;
  const __m256i m0f = _mm256_set1_epi8(0x0f);
  const __m256i table = iq4_table();
  for (int b = 0; b < nb; ++b) {
    const uint8_t* blk = blocks + b * 32 * kBlockBytes;
    prefetch_part<kToL1>(blocks + kQ8Chunk * 32 * kBlockBytes, kQ8Chunk * 32 * kBlockBytes,
                         kQ8Chunk, b);
    scales_f16(blk, dw + b * 32);
    if (L::kMin) scales_f16(blk + 64, mw + b * 32);
    __m256i qh[4];
    if (kQ5) load_quad(blk + L::kQh * 32, qh);
    for (int g = 0; g < 4; ++g) {
      __m256i v[4];
      load_quad(blk + (kQs + 4 * g) * 32, v);
      for (int c = 0; c < 4; ++c) {
        __m256i lo = _mm256_and_si256(v[c], m0f);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f);
        if (kQ5) {
          lo = _mm256_or_si256(lo, q5_0_fifth_bits<false>(qh[c], g));
          hi = _mm256_or_si256(hi, q5_0_fifth_bits<true>(qh[c], g));
        }
        const __m256i wl = kIq4 ? _mm256_shuffle_epi8(table, lo) : lo;
        const __m256i wh = kIq4 ? _mm256_shuffle_epi8(table, hi) : hi;
        _mm256_store_si256((__m256i*)(wt + b * 1024 + g * 128 + 32 * c), wl);
        _mm256_store_si256((__m256i*)(wt + b * 1024 + (4 + g) * 128 + 32 * c), wh);
      }
    }
  }
}

// One row x one Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_1 or Q5_1 panel read in place, over all of K from
// +0.0f (decode: a block of one row reuses no repack). Per k block and 8 lanes the exact integer
// sum of the signed codes times the activations, then q8_0_tile's float step, in block order: the
// same bits. Q8_0 multiplies |w| by (a with w's sign), IQ4_NL |a| by (w with a's sign:
// signed_pair_sums), and both widen each group; Q4_0 multiplies
// the unsigned nibbles q, adds the 8 pair sums of a lane's 16-bit half in 16 bits (at most
// 8 x 2 x 15 x 127 = 30,480) and takes 8 x the activations' block sum out: sum((q - 8) a).
// Q5_0 likewise with its unsigned 5-bit codes and 16 x the sum, each group's 2 pair sums
// (2 x 2 x 31 x 127 = 15,748) widened at once. The panel's quads (kernels/panel_layout.h) are
// the multiplies' operands as they are, lanes in order. Q4_1 and Q5_1 add their mins' step.
// No software prefetch: without it the 0.8B decode ran 3-10 % faster (docs/kernels.md
// "Prefetch").
template <int kType>
inline void q8_0_row_in_place(const uint8_t* panel, int64_t nbt, const uint8_t* xrow,
                              int64_t xd_off, int64_t xs_off, float* y, int64_t n_cols) {
  using L = Q4x32<kType>;
  constexpr bool kQ8 = kType == int(core::DType::kQ8_0);
  constexpr bool kIq4 = L::kIq4, kQ5 = L::kQ5, kMin = L::kMin;
  constexpr int kBlockBytes = kQ8 ? 34 : L::kBlockBytes, kQs = kQ8 ? 2 : L::kQs;
  const __m256i m0f = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  const __m256i table = iq4_table();
  __m256 acc[4];
  for (int c = 0; c < 4; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * kBlockBytes;
    const uint8_t* a = xrow + kb * 32;
    alignas(32) float dw[32], mw[32];
    scales_f16(blk, dw);
    if (kMin) scales_f16(blk + 64, mw);
    __m256i ia[4], qh[4];  // lanes in order
    for (int c = 0; c < 4; ++c) ia[c] = _mm256_setzero_si256();
    if (kQ5) load_quad(blk + L::kQh * 32, qh);
#pragma GCC unroll 8
    for (int g = 0; g < (kQ8 ? 8 : 4); ++g) {
      __m256i v[4];
      load_quad(blk + (kQs + 4 * g) * 32, v);
      const __m256i alo = _mm256_set1_epi32(load_i32(a + 4 * g));
      const __m256i ahi = _mm256_set1_epi32(load_i32(a + 16 + 4 * g));
      const __m256i alo_abs = _mm256_abs_epi8(alo), ahi_abs = _mm256_abs_epi8(ahi);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        if (kQ8) {
          const __m256i p =
              _mm256_maddubs_epi16(_mm256_abs_epi8(v[c]), _mm256_sign_epi8(alo, v[c]));
          ia[c] = _mm256_add_epi32(ia[c], _mm256_madd_epi16(p, ones));
          continue;
        }
        __m256i lo = _mm256_and_si256(v[c], m0f);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f);
        if (kIq4) {
          const __m256i pl = signed_pair_sums(alo_abs, alo, _mm256_shuffle_epi8(table, lo));
          const __m256i ph = signed_pair_sums(ahi_abs, ahi, _mm256_shuffle_epi8(table, hi));
          ia[c] = _mm256_add_epi32(
              ia[c], _mm256_add_epi32(_mm256_madd_epi16(pl, ones), _mm256_madd_epi16(ph, ones)));
        } else if (kQ5) {  // 2 pair sums per 16 bits, widened per group
          lo = _mm256_or_si256(lo, q5_0_fifth_bits<false>(qh[c], g));
          hi = _mm256_or_si256(hi, q5_0_fifth_bits<true>(qh[c], g));
          ia[c] = _mm256_add_epi32(
              ia[c], _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo, alo),
                                                        _mm256_maddubs_epi16(hi, ahi)),
                                       ones));
        } else {  // 16-bit pair sums, widened after the block
          ia[c] = _mm256_add_epi16(ia[c], _mm256_add_epi16(_mm256_maddubs_epi16(lo, alo),
                                                           _mm256_maddubs_epi16(hi, ahi)));
        }
      }
    }
    float dxv;
    __builtin_memcpy(&dxv, xrow + xd_off + 4 * kb, 4);
    const __m256 dx = _mm256_set1_ps(dxv);
    const int32_t a_sum = load_i32(xrow + xs_off + 4 * kb);
    const __m256i off = _mm256_set1_epi32(-L::kOffset * a_sum);
    for (int c = 0; c < 4; ++c) {
      const __m256i sum = kQ8 || kIq4 ? ia[c]
                          : kQ5       ? _mm256_add_epi32(ia[c], off)
                                      : _mm256_add_epi32(_mm256_madd_epi16(ia[c], ones), off);
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum),
                               _mm256_mul_ps(_mm256_load_ps(dw + 8 * c), dx), acc[c]);
      if (kMin)
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(float(a_sum)),
                                 _mm256_mul_ps(_mm256_load_ps(mw + 8 * c), dx), acc[c]);
    }
  }
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c)
    _mm256_maskstore_ps(y + 8 * c, lane_mask8(n_cols - 8 * c), acc[c]);
}

// Q8_0, and through its repack to signed codes Q4_0, IQ4_NL and Q5_0 (block_bytes 34, 18 or
// 22); a block of one row reads its panels in place instead.
template <int kType>
inline void int8_q8_0_block(const GemmJob& job, const GemmBlock& b) {
  constexpr bool kQ8 = kType == int(core::DType::kQ8_0);
  constexpr int64_t kBlockBytes = kQ8 ? 34 : Q4x32<kType>::kBlockBytes;
  alignas(64) uint8_t wt[kQ8Chunk * 1024];
  alignas(64) float dw[kQ8Chunk * 32], mw[kQ8Chunk * 32];
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 32, pstride = nbt * 32 * kBlockBytes;
  if (b.m1 - b.m0 == 1) {
    for (int64_t p = b.p0; p < b.p1; ++p)
      q8_0_row_in_place<kType>(panels + p * pstride, nbt, job.xq + b.m0 * job.ldq, job.xd_off,
                               job.xs_off, job.y + b.m0 * job.ldy + p * 32, job.N - p * 32);
    return;
  }
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t kb0 = 0; kb0 < nbt; kb0 += kQ8Chunk) {
      const int nb = int(nbt - kb0 < kQ8Chunk ? nbt - kb0 : kQ8Chunk);
      const uint8_t* src = panels + p * pstride + kb0 * 32 * kBlockBytes;
      if (kType == int(core::DType::kQ8_0)) {
        repack_q8_0(src, nb, wt, dw);
      } else {
        repack_q4_32<kType>(src, nb, wt, dw, mw);
      }
      for (int64_t m = b.m0; m < b.m1; m += kInt8Mr) {
        const int r = int(b.m1 - m < kInt8Mr ? b.m1 - m : kInt8Mr);
        (kQ8 || kType == int(core::DType::kIQ4_NL) ? pick_q8_0(r) : pick_q4_32_unsigned(kType, r))(
            wt, dw, kQ8 || !Q4x32<kType>::kMin ? nullptr : mw, nb, job.xq + m * job.ldq, job.ldq,
            job.xd_off, job.xs_off, kb0, job.y + m * job.ldy + p * 32, job.ldy, kb0 == 0,
            job.N - p * 32);
      }
    }
  }
}

// The 32 lanes' d, dmin and 8 sub-blocks' 6-bit scales and mins of one Q4_K k block of a panel
// (144 byte rows of 32 lanes), the scales and mins as kernels/quant.cc's q4k_scale_min, a byte
// per lane, all 32 lanes at once: 12 loads and byte masks and shifts (a 16-bit shift, its bits
// from the next byte masked off). Widened to int32 where they are used (the unpack per lane to
// int32 here was a fifth of AVX2's one-row Q4_K time: docs/performance.md).
inline void q4_k_block_scales(const uint8_t* blk, float* d, float* dmin, uint8_t (*sc)[32],
                              uint8_t (*mn)[32]) {
  scales_f16(blk, d);
  scales_f16(blk + 64, dmin);
  const __m256i m63 = _mm256_set1_epi8(63), m15 = _mm256_set1_epi8(15),
                m30 = _mm256_set1_epi8(0x30);
  __m256i s[12];  // unrolled: the loads went through a stack copy (rep movsq) otherwise
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) s[i] = _mm256_loadu_si256((const __m256i*)(blk + (4 + i) * 32));
  // (x >> 6) << 4 for each byte x.
  auto top2 = [&](__m256i x) { return _mm256_and_si256(_mm256_srli_epi16(x, 2), m30); };
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    __m256i vs, vm;
    if (j < 4) {
      vs = _mm256_and_si256(s[j], m63);
      vm = _mm256_and_si256(s[j + 4], m63);
    } else {
      vs = _mm256_or_si256(_mm256_and_si256(s[j + 4], m15), top2(s[j - 4]));
      vm = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(s[j + 4], 4), m15), top2(s[j]));
    }
    _mm256_store_si256((__m256i*)sc[j], vs);
    _mm256_store_si256((__m256i*)mn[j], vm);
  }
}

// Lanes 8c .. 8c + 7 of a byte per lane, as int32.
ANCHORAGE_FORCE_INLINE __m256i lanes_u8_to_i32(const uint8_t* lanes, int c) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(lanes + 8 * c)));
}

// Per byte, bit b of u moved to bit 4 (0x10), the others cleared: Q5_K's fifth bit of sub-block b
// as code bit 4, in two operations (a 16-bit shift keeps a byte's bit 4 within its byte for
// shifts up to 4 left and 3 right); a constant b where the caller's loop is unrolled.
ANCHORAGE_FORCE_INLINE __m256i fifth_bit_of(__m256i u, int b) {
  const __m256i m = _mm256_set1_epi8(0x10);
  if (b <= 4) return _mm256_and_si256(_mm256_slli_epi16(u, 4 - b), m);
  return _mm256_and_si256(_mm256_srli_epi16(u, b - 4), m);
}

// One Q4_K k block of a panel -> Q4KRepacked (its nibbles are in quads already: copied with the
// codes split). Q5_K (kQ5; 176 byte rows: Q4_K's 16 rows of d, dmin, scales; 32 rows of fifth
// bits qh in quads, bit j of row e for input e of sub-block j; Q4_K's nibbles at row 48): the
// codes q | fifth bit << 4 (<= 31).
template <bool kQ5>
inline void repack_q4_k(const uint8_t* blk, Q4KRepacked* w) {
  constexpr int kBlockBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  alignas(32) uint8_t sc[8][32], mn[8][32];
  q4_k_block_scales(blk, w->d, w->dmin, sc, mn);
  for (int j = 0; j < 8; ++j) {
    for (int c = 0; c < 4; ++c) {
      _mm256_store_si256((__m256i*)(w->sc[j] + 8 * c), lanes_u8_to_i32(sc[j], c));
      _mm256_store_si256((__m256i*)(w->mn[j] + 8 * c), lanes_u8_to_i32(mn[j], c));
    }
  }
  const __m256i m0f = _mm256_set1_epi8(0x0f);
  // The 32 qh rows serve every pair of sub-blocks (bits 2i, 2i + 1): loaded once.
  __m256i ub[kQ5 ? 8 : 1][4];
  if constexpr (kQ5) {
    for (int g = 0; g < 8; ++g) load_quad(blk + (16 + 4 * g) * 32, ub[g]);
  }
  for (int i = 0; i < 4; ++i) {
    for (int g = 0; g < 8; ++g) {
      prefetch_part<kToL1>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 32, 8 * i + g);
      __m256i v[4];
      load_quad(blk + (kQs + 32 * i + 4 * g) * 32, v);
      const __m256i* u = ub[kQ5 ? g : 0];
      for (int c = 0; c < 4; ++c) {
        __m256i lo = _mm256_and_si256(v[c], m0f);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f);
        if (kQ5) {
          lo = _mm256_or_si256(lo, fifth_bit_of(u[c], 2 * i));
          hi = _mm256_or_si256(hi, fifth_bit_of(u[c], 2 * i + 1));
        }
        _mm256_store_si256((__m256i*)(w->q[2 * i][g] + 32 * c), lo);
        _mm256_store_si256((__m256i*)(w->q[2 * i + 1][g] + 32 * c), hi);
      }
    }
  }
}

// Per byte, a 6-bit scale minus 32 (Q3_K's and IQ4_XS's, signed): its low 4 bits the low
// (kHighNibble: high) nibble of l, its high 2 bits 2k, 2k + 1 of h. 16-bit shifts: the bits each
// mask keeps come from their own byte.
template <bool kHighNibble>
ANCHORAGE_FORCE_INLINE __m256i scale6_minus_32(__m256i l, __m256i h, int k) {
  const __m256i m15 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
  const __m256i lo = _mm256_and_si256(kHighNibble ? _mm256_srli_epi16(l, 4) : l, m15);
  const __m256i hi = _mm256_and_si256(k < 2    ? _mm256_slli_epi16(h, 4 - 2 * k)
                                      : k == 2 ? h
                                               : _mm256_srli_epi16(h, 2),
                                      m30);
  return _mm256_sub_epi8(_mm256_or_si256(lo, hi), _mm256_set1_epi8(32));
}

// The 8 sub-blocks' ls - 32 of one IQ4_XS k block of a panel (136 byte rows: d, the u16
// scales_h in rows 2-3, scales_l in rows 4-7), a signed byte per lane in lane order, all 32 lanes
// at once: ls's low 4 bits in nibble j % 2 of scales_l[j / 2], its high 2 at bits 2j, 2j + 1 of
// scales_h (byte row 2 + j / 4, bits 2(j % 4)).
ANCHORAGE_FORCE_INLINE void iq4_xs_scale_bytes(const uint8_t* blk, int8_t (*scb)[32]) {
  __m256i r[6];
  for (int i = 0; i < 6; ++i) r[i] = _mm256_loadu_si256((const __m256i*)(blk + (2 + i) * 32));
  for (int j = 0; j < 8; j += 2) {
    _mm256_store_si256((__m256i*)scb[j], scale6_minus_32<false>(r[2 + j / 2], r[j / 4], j % 4));
    _mm256_store_si256((__m256i*)scb[j + 1],
                       scale6_minus_32<true>(r[2 + j / 2], r[j / 4], j % 4 + 1));
  }
}

// The 32 lanes' d and the 8 sub-blocks' ls - 32 as int32 of one IQ4_XS k block (the repack's).
inline void iq4_xs_block_scales(const uint8_t* blk, float* d, int32_t (*sc)[32]) {
  scales_f16(blk, d);
  alignas(32) int8_t scb[8][32];
  iq4_xs_scale_bytes(blk, scb);
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 4; ++c)
      _mm256_store_si256((__m256i*)(sc[j] + 8 * c),
                         _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(scb[j] + 8 * c))));
}

// One IQ4_XS k block of a panel (sub-block j's 16 code rows at row 8 + 16j, low / high nibbles
// its inputs e / 16 + e) -> Q4KRepacked: the signed levels, sc = ls - 32, d (dmin, mn unused).
inline void repack_iq4_xs(const uint8_t* blk, Q4KRepacked* w) {
  iq4_xs_block_scales(blk, w->d, w->sc);
  const __m256i m0f = _mm256_set1_epi8(0x0f), table = iq4_table();
  for (int j = 0; j < 8; ++j) {
    for (int g = 0; g < 4; ++g) {
      prefetch_part<kToL1>(blk + 32 * 136, 32 * 136, 32, 4 * j + g);
      __m256i v[4];
      load_quad(blk + (8 + 16 * j + 4 * g) * 32, v);
      for (int c = 0; c < 4; ++c) {
        _mm256_store_si256((__m256i*)(w->q[j][g] + 32 * c),
                           _mm256_shuffle_epi8(table, _mm256_and_si256(v[c], m0f)));
        _mm256_store_si256(
            (__m256i*)(w->q[j][4 + g] + 32 * c),
            _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f)));
      }
    }
  }
}

// One Q6_K k block of a panel (210 byte rows of 32 lanes, each where q6_k_row puts it) ->
// Q6KRepacked. Input 128h + 32t + e
// is the nibble of ql row 64h + 32(t % 2) + e (low for t < 2) with bits 2t, 2t+1 of qh row
// 128 + 32h + e as bits 4-5 (ql and qh in quads: loaded as they are).
inline void repack_q6_k(const uint8_t* blk, Q6KRepacked* w) {
  scales_f16(blk + q6_k_row(208) * 32, w->d);
  for (int j = 0; j < 16; ++j)
    for (int c = 0; c < 4; ++c)
      _mm256_store_si256((__m256i*)(w->sc[j] + 8 * c),
                         _mm256_cvtepi8_epi32(_mm_loadl_epi64(
                             (const __m128i*)(blk + q6_k_row(192 + j) * 32 + 8 * c))));
  const __m256i m0f = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  for (int h = 0; h < 2; ++h) {
    for (int g = 0; g < 8; ++g) {
      prefetch_part<kToL1>(blk + 32 * 210, 32 * 210, 16, 8 * h + g);
      __m256i l0[4], l1[4], u[4];
      const uint8_t* q0 = blk + q6_k_row(64 * h + 4 * g) * 32;
      const uint8_t* q1 = blk + q6_k_row(64 * h + 32 + 4 * g) * 32;
      const uint8_t* qh = blk + q6_k_row(128 + 32 * h + 4 * g) * 32;
      load_quad(q0, l0);
      load_quad(q1, l1);
      load_quad(qh, u);
      for (int t = 0; t < 4; ++t) {
        const int j = 8 * h + 2 * t + g / 4;
        for (int c = 0; c < 4; ++c) {
          const __m256i l = t % 2 == 0 ? l0[c] : l1[c];
          const __m256i nib = _mm256_and_si256(t < 2 ? l : _mm256_srli_epi16(l, 4), m0f);
          const __m256i up =
              t < 2 ? _mm256_slli_epi16(u[c], 4 - 2 * t) : _mm256_srli_epi16(u[c], 2 * t - 4);
          _mm256_store_si256((__m256i*)(w->q[j][g % 4] + 32 * c),
                             _mm256_or_si256(nib, _mm256_and_si256(up, m30)));
        }
      }
    }
  }
}

// One row's activations of k block kb (quant_dot.h ActFormat): its 256 int8 inputs, its 16
// int32 sums of 16 and its scale broadcast, as the one-row paths read them.
struct RowBlockActs {
  const uint8_t* a;
  const int32_t* s16;
  __m256 dx;
};
ANCHORAGE_FORCE_INLINE RowBlockActs row_block_acts(const uint8_t* xrow, int64_t xd_off,
                                                   int64_t xs_off, int64_t kb) {
  float dxv;
  __builtin_memcpy(&dxv, xrow + xd_off + 4 * kb, 4);
  return {xrow + kb * 256, reinterpret_cast<const int32_t*>(xrow + xs_off) + kb * 16,
          _mm256_set1_ps(dxv)};
}

// One row x one Q6_K k block of a panel read in place (decode: a block of one row reuses no
// repack, so the 6-bit codes go straight from the panel into the multiplies instead of through
// Q6KRepacked): per lane the same exact integer sum as q6_k_tile<1> (integer additions in any
// order give the same integer) and its float step, so the same bits. The block is walked once
// per 16 lanes (two registers of a quad, lanes in order; the 16 sub-block sums of 32 lanes do
// not fit 16 ymm), each group's pair sums widened at once.
inline void q6_k_row_in_place(const uint8_t* blk, const uint8_t* xrow, int64_t xd_off,
                              int64_t xs_off, int64_t kb, float* y, bool first, int64_t n_cols) {
  alignas(32) float d[32];
  scales_f16(blk + q6_k_row(208) * 32, d);
  // Sub-block j's int8 scales, a byte per lane in lane order: bytes 8c .. 8c + 7 are register
  // c's.
  const auto sc = [blk](int j) {
    return reinterpret_cast<const int8_t*>(blk + q6_k_row(192 + j) * 32);
  };
  const __m256i m0f = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  const __m256i ones = _mm256_set1_epi16(1);
  const auto [a, s16, dx] = row_block_acts(xrow, xd_off, xs_off, kb);
  __m256i S[4];  // lanes in order
  // 16 of the 32 lanes (two registers) over the whole block.
  auto half = [&]<bool kHigh>() {
    __m256i S0 = _mm256_setzero_si256(), S1 = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      for (int gh = 0; gh < 2; ++gh) {  // sub-blocks 8h + 2t + gh, t = 0 .. 3
        __m256i is[4][2];
        for (int t = 0; t < 4; ++t) is[t][0] = is[t][1] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int g = 4 * gh; g < 4 * gh + 4; ++g) {
          if (!kHigh) prefetch_part<kToL2>(blk + 32 * 210, 32 * 210, 16, 8 * h + g);
          __m256i l0[2], l1[2], u[2];
          load_quad_half<kHigh>(blk + q6_k_row(64 * h + 4 * g) * 32, l0);
          load_quad_half<kHigh>(blk + q6_k_row(64 * h + 32 + 4 * g) * 32, l1);
          load_quad_half<kHigh>(blk + q6_k_row(128 + 32 * h + 4 * g) * 32, u);
#pragma GCC unroll 4
          for (int t = 0; t < 4; ++t) {
            const __m256i av = _mm256_set1_epi32(load_i32(a + 128 * h + 32 * t + 4 * g));
#pragma GCC unroll 2
            for (int e = 0; e < 2; ++e) {
              const __m256i l = t % 2 == 0 ? l0[e] : l1[e];
              const __m256i nib = _mm256_and_si256(t < 2 ? l : _mm256_srli_epi16(l, 4), m0f);
              const __m256i up =
                  t < 2 ? _mm256_slli_epi16(u[e], 4 - 2 * t) : _mm256_srli_epi16(u[e], 2 * t - 4);
              const __m256i q = _mm256_or_si256(nib, _mm256_and_si256(up, m30));
              is[t][e] =
                  _mm256_add_epi32(is[t][e], _mm256_madd_epi16(_mm256_maddubs_epi16(q, av), ones));
            }
          }
        }
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
          const int j = 8 * h + 2 * t + gh;
          const __m256i off = _mm256_set1_epi32(32 * s16[j]);
          const int c0 = kHigh ? 2 : 0;
          const __m256i sc0 =
              _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(sc(j) + 8 * c0)));
          const __m256i sc1 =
              _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(sc(j) + 8 * c0 + 8)));
          S0 = _mm256_add_epi32(S0, _mm256_mullo_epi32(_mm256_sub_epi32(is[t][0], off), sc0));
          S1 = _mm256_add_epi32(S1, _mm256_mullo_epi32(_mm256_sub_epi32(is[t][1], off), sc1));
        }
      }
    }
    S[kHigh ? 2 : 0] = S0;
    S[kHigh ? 3 : 1] = S1;
  };
  half.template operator()<false>();
  half.template operator()<true>();
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + 8 * c, mask);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[c]), _mm256_mul_ps(_mm256_load_ps(d + 8 * c), dx),
                          acc);
    _mm256_maskstore_ps(y + 8 * c, mask, acc);
  }
}

// The 16 sub-blocks' scales of one Q3_K k block of a panel (sc - 32, signed), a byte per lane, all
// 32 lanes at once: the low 4 bits in the low nibble of scale byte j % 8 (high nibble for j >= 8),
// the high 2 at bits 2(j / 4), 2(j / 4) + 1 of byte 8 + j % 4.
inline void q3_k_scale_bytes(const uint8_t* blk, int8_t (*scb)[32]) {
  __m256i r[12];  // unrolled: the loads went through a stack copy (rep movsq) otherwise
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i)
    r[i] = _mm256_loadu_si256((const __m256i*)(blk + q3_k_row(96 + i) * 32));
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    _mm256_store_si256((__m256i*)scb[j], scale6_minus_32<false>(r[j], r[8 + j % 4], j / 4));
    _mm256_store_si256((__m256i*)scb[j + 8], scale6_minus_32<true>(r[j], r[8 + j % 4], j / 4 + 2));
  }
}

// The k block's d (and Q2_K's dmin) as f32 and its 16 sub-blocks' scales (Q3_K: sc - 32;
// Q2_K: sc and the mins) as int32, [sub-block][lane]: the repack's.
template <bool kQ3>
inline void q3_q2_k_block_scales(const uint8_t* blk, float* d, float* dmin, int32_t (*sc)[32],
                                 int32_t (*mn)[32]) {
  scales_f16(blk + q3_q2_k_row<kQ3>(kQ3 ? 108 : 80) * 32, d);
  if (kQ3) {
    alignas(32) int8_t scb[16][32];
    q3_k_scale_bytes(blk, scb);
    for (int j = 0; j < 16; ++j)
      for (int c = 0; c < 4; ++c)
        _mm256_store_si256((__m256i*)(sc[j] + 8 * c),
                           _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(scb[j] + 8 * c))));
    return;
  }
  scales_f16(blk + q2_k_row(82) * 32, dmin);
  const __m256i m15 = _mm256_set1_epi32(15);
  for (int c = 0; c < 4; ++c) {
    for (int j = 0; j < 16; ++j) {
      const __m256i sb =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(blk + q2_k_row(j) * 32 + 8 * c)));
      _mm256_store_si256((__m256i*)(sc[j] + 8 * c), _mm256_and_si256(sb, m15));
      _mm256_store_si256((__m256i*)(mn[j] + 8 * c), _mm256_srli_epi32(sb, 4));
    }
  }
}

// Q3_K's code (0-7) of inputs 128h + 32t + slot, a byte each, from the slot's code bytes: x its
// A (h = 0) or B (h = 1) byte, c its C byte (kernels/q3_k_codes.h). 16-bit shifts: every bit
// kept comes from its own byte.
ANCHORAGE_FORCE_INLINE __m256i q3_k_code_bytes(__m256i x, __m256i c, int h, int t) {
  const __m256i b7 = _mm256_set1_epi8(7), b3 = _mm256_set1_epi8(3), b4 = _mm256_set1_epi8(4);
  if (t == 2)  // the low pair at bits 6-7 of x, the high bit at bit 6 + h of c
    return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 6), b3),
                           _mm256_and_si256(_mm256_srli_epi16(c, 4 + h), b4));
  const __m256i y = t == 3 ? c : x;
  const int shift = t == 3 ? 3 * h : 3 * t;
  return _mm256_and_si256(shift ? _mm256_srli_epi16(y, shift) : y, b7);
}

// One Q3_K (kQ3; 110 byte rows: codes 0-95, scales 96-107, d 108-109) or Q2_K (84 byte rows:
// scales 0-15, qs 16-79, d 80-81, dmin 82-83; GGUF's numbers, each row where q3_q2_k_row puts
// it) k block of a panel -> Q6KRepacked. Input
// 128h + 32s + l is bits 2s, 2s + 1 of Q2_K's qs row 32h + l, q3_k_code_bytes(h, s) of Q3_K's
// code rows 32h + l (A or B) and 64 + l (C); it is input 4g + t of sub-block 8h + 2s + l / 16
// with l % 16 = 4g + t.
template <bool kQ3>
inline void repack_q3_q2_k(const uint8_t* blk, Q6KRepacked* w) {
  constexpr int kQs = kQ3 ? 0 : 16, kBlockBytes = kQ3 ? 110 : 84;
  q3_q2_k_block_scales<kQ3>(blk, w->d, w->dmin, w->sc, w->mn);
  const __m256i b3 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    for (int g = 0; g < 8; ++g) {  // l = 4g .. 4g + 3
      prefetch_part<kToL1>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 16, 8 * h + g);
      __m256i v[4], u[4];
      load_quad(blk + q3_q2_k_row<kQ3>(kQs + 32 * h + 4 * g) * 32, v);
      if (kQ3) load_quad(blk + q3_k_row(64 + 4 * g) * 32, u);
      for (int sh = 0; sh < 4; ++sh) {
        const int j = 8 * h + 2 * sh + g / 4;
        for (int c = 0; c < 4; ++c) {
          const __m256i code = kQ3 ? q3_k_code_bytes(v[c], u[c], h, sh)
                                   : _mm256_and_si256(_mm256_srli_epi16(v[c], 2 * sh), b3);
          _mm256_store_si256((__m256i*)(w->q[j][g % 4] + 32 * c), code);
        }
      }
    }
  }
}

// How add_lane_pair_sums reads a byte x: as unsigned, its high nibble (x >> 4), or as int8.
enum class ByteAs { kUnsigned, kHighNibble, kSigned };

// out += per lane f(x_j) s_j + f(x_k) s_k for two rows of a byte per lane in scale order
// (bytes_for_lane_order: the byte unpacks below then leave out[c] = lanes 8c .. 8c + 7), s_j and
// s_k the activations' sums of their sub-blocks (int16: at most 32 * 127), f by kAs: vpmaddwd
// of the int16 pairs (f(x_j), f(x_k)) of a lane by (s_j, s_k), exact in int32. The mins and
// offsets of the one-row paths.
template <ByteAs kAs>
ANCHORAGE_FORCE_INLINE void add_lane_pair_sums(__m256i rj, __m256i rk, int32_t sj, int32_t sk,
                                               __m256i* out) {
  const __m256i zero = _mm256_setzero_si256();
  const uint32_t s0 = uint32_t(sj) & 0xffffu, s1 = uint32_t(sk) << 16;
  const __m256i sums = _mm256_set1_epi32(int32_t(s0 | s1));
  const __m256i t[2] = {_mm256_unpacklo_epi8(rj, rk), _mm256_unpackhi_epi8(rj, rk)};
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    __m256i p;
    if (kAs == ByteAs::kSigned) {  // the byte into the high half of its 16 bits, shifted down
      p = _mm256_srai_epi16(
          c % 2 ? _mm256_unpackhi_epi8(zero, t[c / 2]) : _mm256_unpacklo_epi8(zero, t[c / 2]), 8);
    } else {
      p = c % 2 ? _mm256_unpackhi_epi8(t[c / 2], zero) : _mm256_unpacklo_epi8(t[c / 2], zero);
      if (kAs == ByteAs::kHighNibble) p = _mm256_srli_epi16(p, 4);
    }
    out[c] = _mm256_add_epi32(out[c], _mm256_madd_epi16(p, sums));
  }
}

// The same over 16 rows in scale order (row j at rows + 32 j, s_j its sum of 16), from zero.
template <ByteAs kAs>
ANCHORAGE_FORCE_INLINE void lane_sums_16_rows(const void* rows, const int32_t* s, __m256i* out) {
  const uint8_t* r = static_cast<const uint8_t*>(rows);
  for (int c = 0; c < 4; ++c) out[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int m = 0; m < 8; ++m)
    add_lane_pair_sums<kAs>(_mm256_loadu_si256((const __m256i*)(r + 2 * m * 32)),
                            _mm256_loadu_si256((const __m256i*)(r + (2 * m + 1) * 32)), s[2 * m],
                            s[2 * m + 1], out);
}

// One row x one Q3_K (kQ3) or Q2_K k block of a panel read in place (decode: a block of one
// row reuses no repack, which cost more than the multiplies): the codes go from the panel's
// quads straight into the multiplies, with repack_q3_q2_k's bit layout. Per lane the same
// exact integer sums as q6_k_tile<1, Q3_K / Q2_K> (integer additions in any order give the same
// integer) and its float steps, so the same bits. A code is at most 7, so a vpmaddubsw pair at
// most 2 * 7 * 127 = 1,778 in magnitude: the 4 groups of a sub-block add in 16 bits (7,112)
// before one vpmaddwd. The block is walked once per 16 lanes, as Q6_K's (two registers of each
// quad, lanes in order).
// Q2_K reads its scale bytes straight from the panel: the 4-bit scale duplicated into both
// 16-bit halves of its lane by one vpshufb, so one vpmaddwd adds and scales a sub-block's sums
// (no int32 scales, no vpmulld); its mins m_j s_j two sub-blocks at a time by vpmaddwd of the
// (m_j, m_j+1) pairs by the activations' sums (|s| <= 16 * 127: int16), once per block. Q3_K
// assembles its 6-bit scales as bytes for all 32 lanes at once (sc - 32, signed), duplicated the
// same way sign-extended; its codes are stored + 4, so 4 sum_j sc_j s_j comes off once per block,
// by vpmaddwd of sub-block pairs as Q2_K's mins. Q2_K takes codes 1 and 3 of a byte masked in
// place, as 4 x code (a pair at most 2 * 12 * 127 = 3,048, 4 groups 12,192): one shift a byte
// instead of three, and the 16-bit sums of those sub-blocks shifted down by 2 (exact).
template <bool kQ3>
inline void q3_q2_k_row_in_place(const uint8_t* blk, const uint8_t* xrow, int64_t xd_off,
                                 int64_t xs_off, int64_t kb, float* y, bool first, int64_t n_cols) {
  constexpr int kQs = kQ3 ? 0 : 16, kBlockBytes = kQ3 ? 110 : 84;
  alignas(32) float d[32], dmin[32];
  // Per sub-block a byte per lane in scale order (bytes_for_lane_order, once per block): Q3_K's
  // sc - 32 (here), Q2_K's scale and min byte as the panel has it (in the first half's pass).
  alignas(32) int8_t scb[16][32];
  if constexpr (kQ3) {
    scales_f16(blk + q3_k_row(108) * 32, d);
    q3_k_scale_bytes(blk, scb);
  } else {
    scales_f16(blk + q2_k_row(80) * 32, d);
    scales_f16(blk + q2_k_row(82) * 32, dmin);
  }
  if constexpr (kQ3)
    for (int j = 0; j < 16; ++j)
      _mm256_store_si256((__m256i*)scb[j],
                         bytes_for_lane_order(_mm256_load_si256((const __m256i*)scb[j])));
  const __m256i b3 = _mm256_set1_epi8(3), b12 = _mm256_set1_epi8(12);
  const __m256i low4 = _mm256_set1_epi16(15);
  const __m256i zero = _mm256_setzero_si256();
  const auto [a, s16, dx] = row_block_acts(xrow, xd_off, xs_off, kb);
  __m256i S[4], Mn[4];  // lanes in order
  // 16 of the 32 lanes (two registers) over the whole block.
  auto half = [&]<bool kHigh>() {
    __m256i S0 = zero, S1 = zero;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      for (int gh = 0; gh < 2; ++gh) {  // sub-blocks 8h + 2sh + gh, sh = 0 .. 3
        __m256i is[4][2];               // 16-bit pair sums
        for (int sh = 0; sh < 4; ++sh) is[sh][0] = is[sh][1] = zero;
#pragma GCC unroll 4
        for (int g = 4 * gh; g < 4 * gh + 4; ++g) {  // l = 4g .. 4g + 3
          if (!kHigh) prefetch_part<kToL1>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 16, 8 * h + g);
          __m256i v[2], u[2];  // Q2_K's qs quad; Q3_K's A (h = 0) or B quad and its C quad
          load_quad_half<kHigh>(blk + q3_q2_k_row<kQ3>(kQs + 32 * h + 4 * g) * 32, v);
          if constexpr (kQ3) load_quad_half<kHigh>(blk + q3_k_row(64 + 4 * g) * 32, u);
          __m256i v4[2];
          if constexpr (!kQ3) {
            v4[0] = _mm256_srli_epi16(v[0], 4);
            v4[1] = _mm256_srli_epi16(v[1], 4);
          }
#pragma GCC unroll 4
          for (int sh = 0; sh < 4; ++sh) {
            const __m256i av = _mm256_set1_epi32(load_i32(a + 128 * h + 32 * sh + 4 * g));
#pragma GCC unroll 2
            for (int e = 0; e < 2; ++e) {
              // Q2_K: codes 1 and 3 of a byte masked in place, as 4 x code (v4: v >> 4, once).
              const __m256i code = kQ3      ? q3_k_code_bytes(v[e], u[e], h, sh)
                                   : sh % 2 ? _mm256_and_si256(sh < 2 ? v[e] : v4[e], b12)
                                            : _mm256_and_si256(sh < 2 ? v[e] : v4[e], b3);
              is[sh][e] = _mm256_add_epi16(is[sh][e], _mm256_maddubs_epi16(code, av));
            }
          }
        }
#pragma GCC unroll 4
        for (int sh = 0; sh < 4; ++sh) {
          const int j = 8 * h + 2 * sh + gh;
          if constexpr (kQ3) {
            const __m256i row = _mm256_load_si256((const __m256i*)scb[j]);
            const __m256i c0 = bytes_dup16<(kHigh ? 2 : 0), true>(row);
            const __m256i c1 = bytes_dup16<(kHigh ? 3 : 1), true>(row);
            S0 = _mm256_add_epi32(S0, _mm256_madd_epi16(is[sh][0], c0));
            S1 = _mm256_add_epi32(S1, _mm256_madd_epi16(is[sh][1], c1));
          } else {
            // Q2_K's scale row where the panel's reading order has it, after the sub-block's
            // codes (kernels/q3_k_codes.h, q2_k_row), kept in lane order for the high pass and
            // the mins.
            __m256i row;
            if constexpr (kHigh) {
              row = _mm256_load_si256((const __m256i*)scb[j]);
            } else {
              row = bytes_for_lane_order(
                  _mm256_loadu_si256((const __m256i*)(blk + q2_k_row(j) * 32)));
              _mm256_store_si256((__m256i*)scb[j], row);
            }
            const __m256i c0 = _mm256_and_si256(bytes_dup16<(kHigh ? 2 : 0)>(row), low4);
            const __m256i c1 = _mm256_and_si256(bytes_dup16<(kHigh ? 3 : 1)>(row), low4);
            // Odd sh summed 4 x code: every pair sum a multiple of 4, so the shift is exact.
            const __m256i i0 = sh % 2 ? _mm256_srai_epi16(is[sh][0], 2) : is[sh][0];
            const __m256i i1 = sh % 2 ? _mm256_srai_epi16(is[sh][1], 2) : is[sh][1];
            S0 = _mm256_add_epi32(S0, _mm256_madd_epi16(i0, c0));
            S1 = _mm256_add_epi32(S1, _mm256_madd_epi16(i1, c1));
          }
        }
      }
    }
    S[kHigh ? 2 : 0] = S0;
    S[kHigh ? 3 : 1] = S1;
  };
  half.template operator()<false>();
  half.template operator()<true>();
  if constexpr (kQ3) {  // S -= 4 sum_j sc_j s_j, two sub-blocks at a time
    __m256i C[4];
    lane_sums_16_rows<ByteAs::kSigned>(&scb[0][0], s16, C);
    for (int c = 0; c < 4; ++c) S[c] = _mm256_sub_epi32(S[c], _mm256_slli_epi32(C[c], 2));
  }
  if constexpr (!kQ3) {
    lane_sums_16_rows<ByteAs::kHighNibble>(&scb[0][0], s16, Mn);  // the mins
  }
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + 8 * c, mask);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[c]), _mm256_mul_ps(_mm256_load_ps(d + 8 * c), dx),
                          acc);
    if (!kQ3)
      acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(Mn[c]),
                             _mm256_mul_ps(_mm256_load_ps(dmin + 8 * c), dx), acc);
    _mm256_maskstore_ps(y + 8 * c, mask, acc);
  }
}

// Q6_K, Q3_K and Q2_K: one k block at a time, as Q4_K (a block of one row reads the panel in
// place).
template <int kType>
inline void int8_k16_block(const GemmJob& job, const GemmBlock& b) {
  constexpr bool kQ6 = kType == int(core::DType::kQ6_K), kQ3 = kType == int(core::DType::kQ3_K);
  constexpr int64_t kBlockBytes = kQ6 ? 210 : kQ3 ? 110 : 84;
  Q6KRepacked w;
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 256, pstride = nbt * 32 * kBlockBytes;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t kb = 0; kb < nbt; ++kb) {
      const uint8_t* blk = panels + p * pstride + kb * 32 * kBlockBytes;
      if (b.m1 - b.m0 == 1) {
        const uint8_t* xrow = job.xq + b.m0 * job.ldq;
        float* y = job.y + b.m0 * job.ldy + p * 32;
        if (kQ6)
          q6_k_row_in_place(blk, xrow, job.xd_off, job.xs_off, kb, y, kb == 0, job.N - p * 32);
        else
          q3_q2_k_row_in_place<kQ3>(blk, xrow, job.xd_off, job.xs_off, kb, y, kb == 0,
                                    job.N - p * 32);
        continue;
      }
      if (kQ6) {
        repack_q6_k(blk, &w);
      } else {
        repack_q3_q2_k<kQ3>(blk, &w);
      }
      for (int64_t m = b.m0; m < b.m1; m += kInt8Mr) {
        const int r = int(b.m1 - m < kInt8Mr ? b.m1 - m : kInt8Mr);
        (kQ6   ? pick_q6_k(r)
         : kQ3 ? pick_q3_k(r)
               : pick_q2_k(r))(w, job.xq + m * job.ldq, job.ldq, job.xd_off, job.xs_off, kb,
                               job.y + m * job.ldy + p * 32, job.ldy, kb == 0, job.N - p * 32);
      }
    }
  }
}

// One row x one Q4_K (kQ5: Q5_K) k block of a panel read in place (decode: a block of one row
// reuses no repack, so the codes go straight into the multiplies): the same exact
// integer sums as q4_k_tile<1> and its two float steps, so the same bits. A vpmaddubsw pair sums
// at most 2 * 15 * 127 = 3,810 in magnitude for Q4_K (2 * 31 * 127 = 7,874 for Q5_K), so a
// lane's 16-bit half adds the pairs of 8 groups (30,480; Q5_K: of 4 groups, 31,496) below 2^15;
// one vpmaddwd by the sub-block's scale, duplicated into both halves, then adds the two halves
// and scales them. The mins: vpmaddwd of the int16 pairs (m_2i, m_2i+1) of a lane by the
// activations' sub-block sums (|sum| <= 32 * 127: int16) gives m_2i s_2i + m_2i+1 s_2i+1. The
// panel's quads are the multiplies' operands as they are (kernels/panel_layout.h), lanes in
// order throughout.
template <bool kQ5>
inline void q4_k_row_in_place(const uint8_t* blk, const uint8_t* xrow, int64_t xd_off,
                              int64_t xs_off, int64_t kb, float* y, bool first, int64_t n_cols) {
  constexpr int kBlockBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16, kFlushEvery = kQ5 ? 4 : 8;
  alignas(32) float d[32], dmin[32];
  alignas(32) uint8_t sc[8][32], mn[8][32];
  q4_k_block_scales(blk, d, dmin, sc, mn);
  const __m256i m0f = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
  const int32_t* s16 = reinterpret_cast<const int32_t*>(xrow + xs_off) + kb * 16;
  __m256i S[4], Mn[4];  // lanes in order
  for (int c = 0; c < 4; ++c) S[c] = Mn[c] = zero;
  // Q5_K's fifth bits, loaded once per block: every pair of sub-blocks reads the same 32 qh
  // rows (bits 2i and 2i + 1).
  __m256i ub[kQ5 ? 8 : 1][4];
  if constexpr (kQ5) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) load_quad(blk + (16 + 4 * g) * 32, ub[g]);
  }
  // Sub-blocks 2i and 2i + 1.
  auto pair = [&](int i) __attribute__((always_inline)) {
    const __m256i scl = bytes_for_lane_order(_mm256_load_si256((const __m256i*)sc[2 * i]));
    const __m256i sch = bytes_for_lane_order(_mm256_load_si256((const __m256i*)sc[2 * i + 1]));
    for (int g0 = 0; g0 < 8; g0 += kFlushEvery) {
      __m256i lo[4], hi[4];  // 16-bit pair sums of sub-blocks 2i and 2i + 1, lane order
      for (int c = 0; c < 4; ++c) lo[c] = hi[c] = zero;
#pragma GCC unroll 8
      for (int g = g0; g < g0 + kFlushEvery; ++g) {
        prefetch_part<kToL2>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 32, 8 * i + g);
        __m256i v[4];
        load_quad(blk + (kQs + 32 * i + 4 * g) * 32, v);
        const __m256i* u = ub[kQ5 ? g : 0];
        const uint8_t* a = xrow + kb * 256 + 64 * i + 4 * g;
        const __m256i alo = _mm256_set1_epi32(load_i32(a)),
                      ahi = _mm256_set1_epi32(load_i32(a + 32));
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          __m256i ql = _mm256_and_si256(v[c], m0f);
          __m256i qh = _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f);
          if (kQ5) {
            ql = _mm256_or_si256(ql, fifth_bit_of(u[c], 2 * i));
            qh = _mm256_or_si256(qh, fifth_bit_of(u[c], 2 * i + 1));
          }
          lo[c] = _mm256_add_epi16(lo[c], _mm256_maddubs_epi16(ql, alo));
          hi[c] = _mm256_add_epi16(hi[c], _mm256_maddubs_epi16(qh, ahi));
        }
      }
      S[0] = _mm256_add_epi32(S[0], _mm256_madd_epi16(lo[0], bytes_dup16<0>(scl)));
      S[1] = _mm256_add_epi32(S[1], _mm256_madd_epi16(lo[1], bytes_dup16<1>(scl)));
      S[2] = _mm256_add_epi32(S[2], _mm256_madd_epi16(lo[2], bytes_dup16<2>(scl)));
      S[3] = _mm256_add_epi32(S[3], _mm256_madd_epi16(lo[3], bytes_dup16<3>(scl)));
      S[0] = _mm256_add_epi32(S[0], _mm256_madd_epi16(hi[0], bytes_dup16<0>(sch)));
      S[1] = _mm256_add_epi32(S[1], _mm256_madd_epi16(hi[1], bytes_dup16<1>(sch)));
      S[2] = _mm256_add_epi32(S[2], _mm256_madd_epi16(hi[2], bytes_dup16<2>(sch)));
      S[3] = _mm256_add_epi32(S[3], _mm256_madd_epi16(hi[3], bytes_dup16<3>(sch)));
    }
    // Mins of sub-blocks 2i and 2i + 1 (32 inputs each: two sums of 16).
    add_lane_pair_sums<ByteAs::kUnsigned>(
        bytes_for_lane_order(_mm256_load_si256((const __m256i*)mn[2 * i])),
        bytes_for_lane_order(_mm256_load_si256((const __m256i*)mn[2 * i + 1])),
        s16[4 * i] + s16[4 * i + 1], s16[4 * i + 2] + s16[4 * i + 3], Mn);
  };
  if constexpr (kQ5) {
    // Unrolled, so the fifth-bit shifts are constants (Q4_K measured slower unrolled).
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) pair(i);
  } else {
    for (int i = 0; i < 4; ++i) pair(i);
  }
  float dxv;
  __builtin_memcpy(&dxv, xrow + xd_off + 4 * kb, 4);
  const __m256 dx = _mm256_set1_ps(dxv);
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + 8 * c, mask);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[c]), _mm256_mul_ps(_mm256_load_ps(d + 8 * c), dx),
                          acc);
    acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(Mn[c]),
                           _mm256_mul_ps(_mm256_load_ps(dmin + 8 * c), dx), acc);
    _mm256_maskstore_ps(y + 8 * c, mask, acc);
  }
}

// One row x one IQ4_XS k block of a panel read in place: per group and 8 lanes the pair sums of
// level x a (|a| x (level with a's sign), signed_pair_sums: a pair at most 2 * 127 * 127 < 2^15),
// each added to the block sum by one vpmaddwd with the sub-block's ls - 32 duplicated into both
// 16-bit halves of its lane (bytes_dup16): sum_j (ls_j - 32) sum(level x a), at most
// 8 * 8 * 2 * 32,258 * 32 in magnitude, exact in int32 and so the same integer as iq4_xs
// tile<1>'s (per sub-block sums times vpmulld); then its float step: the same bits.
inline void iq4_xs_row_in_place(const uint8_t* blk, const uint8_t* xrow, int64_t xd_off, int64_t kb,
                                float* y, bool first, int64_t n_cols) {
  alignas(32) float d[32];
  alignas(32) int8_t scb[8][32];
  scales_f16(blk, d);
  iq4_xs_scale_bytes(blk, scb);
  const __m256i m0f = _mm256_set1_epi8(0x0f), table = iq4_table();
  __m256i S[4];  // lanes in order
  for (int c = 0; c < 4; ++c) S[c] = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const __m256i row = bytes_for_lane_order(_mm256_load_si256((const __m256i*)scb[j]));
    const __m256i sc[4] = {bytes_dup16<0, true>(row), bytes_dup16<1, true>(row),
                           bytes_dup16<2, true>(row), bytes_dup16<3, true>(row)};
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      prefetch_part<kToL2>(blk + 32 * 136, 32 * 136, 32, 4 * j + g);
      __m256i v[4];
      load_quad(blk + (8 + 16 * j + 4 * g) * 32, v);
      const uint8_t* a = xrow + kb * 256 + 32 * j + 4 * g;
      const __m256i alo = _mm256_set1_epi32(load_i32(a)), ahi = _mm256_set1_epi32(load_i32(a + 16));
      const __m256i alo_abs = _mm256_abs_epi8(alo), ahi_abs = _mm256_abs_epi8(ahi);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m256i wl = _mm256_shuffle_epi8(table, _mm256_and_si256(v[c], m0f));
        const __m256i wh =
            _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v[c], 4), m0f));
        const __m256i pl = signed_pair_sums(alo_abs, alo, wl);
        const __m256i ph = signed_pair_sums(ahi_abs, ahi, wh);
        S[c] = _mm256_add_epi32(
            S[c], _mm256_add_epi32(_mm256_madd_epi16(pl, sc[c]), _mm256_madd_epi16(ph, sc[c])));
      }
    }
  }
  float dxv;
  __builtin_memcpy(&dxv, xrow + xd_off + 4 * kb, 4);
  const __m256 dx = _mm256_set1_ps(dxv);
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + 8 * c, mask);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[c]), _mm256_mul_ps(_mm256_load_ps(d + 8 * c), dx),
                          acc);
    _mm256_maskstore_ps(y + 8 * c, mask, acc);
  }
}

// Q4_K, Q5_K and IQ4_XS: one k block (256 inputs) at a time, repacked once for all the block's
// row tiles (a block of one row reads the panel in place instead).
template <int kType>
inline void int8_k256_block(const GemmJob& job, const GemmBlock& b) {
  constexpr bool kQ5 = kType == int(core::DType::kQ5_K), kXs = kType == int(core::DType::kIQ4_XS);
  constexpr int64_t kBlockBytes = kQ5 ? 176 : kXs ? 136 : 144;
  Q4KRepacked w;
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 256, pstride = nbt * 32 * kBlockBytes;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t kb = 0; kb < nbt; ++kb) {
      const uint8_t* blk = panels + p * pstride + kb * 32 * kBlockBytes;
      float* y = job.y + b.m0 * job.ldy + p * 32;
      if (b.m1 - b.m0 == 1) {
        const uint8_t* xrow = job.xq + b.m0 * job.ldq;
        if (kXs) {
          iq4_xs_row_in_place(blk, xrow, job.xd_off, kb, y, kb == 0, job.N - p * 32);
        } else {
          q4_k_row_in_place<kQ5>(blk, xrow, job.xd_off, job.xs_off, kb, y, kb == 0, job.N - p * 32);
        }
        continue;
      }
      if (kXs) {
        repack_iq4_xs(blk, &w);
      } else {
        repack_q4_k<kQ5>(blk, &w);
      }
      for (int64_t m = b.m0; m < b.m1; m += kInt8Mr) {
        const int r = int(b.m1 - m < kInt8Mr ? b.m1 - m : kInt8Mr);
        (kXs ? pick_iq4_xs(r) : pick_q4_k(r))(w, job.xq + m * job.ldq, job.ldq, job.xd_off,
                                              job.xs_off, kb, job.y + m * job.ldy + p * 32, job.ldy,
                                              kb == 0, job.N - p * 32);
      }
    }
  }
}

inline void gemm_int8_block_impl(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return int8_q8_0_block<int(core::DType::kQ8_0)>(job, b);
    case core::DType::kQ4_0:
      return int8_q8_0_block<int(core::DType::kQ4_0)>(job, b);
    case core::DType::kIQ4_NL:
      return int8_q8_0_block<int(core::DType::kIQ4_NL)>(job, b);
    case core::DType::kQ5_0:
      return int8_q8_0_block<int(core::DType::kQ5_0)>(job, b);
    case core::DType::kQ4_1:
      return int8_q8_0_block<int(core::DType::kQ4_1)>(job, b);
    case core::DType::kQ5_1:
      return int8_q8_0_block<int(core::DType::kQ5_1)>(job, b);
    case core::DType::kQ4_K:
      return int8_k256_block<int(core::DType::kQ4_K)>(job, b);
    case core::DType::kQ5_K:
      return int8_k256_block<int(core::DType::kQ5_K)>(job, b);
    case core::DType::kIQ4_XS:
      return int8_k256_block<int(core::DType::kIQ4_XS)>(job, b);
    case core::DType::kQ6_K:
      return int8_k16_block<int(core::DType::kQ6_K)>(job, b);
    case core::DType::kQ3_K:
      return int8_k16_block<int(core::DType::kQ3_K)>(job, b);
    case core::DType::kQ2_K:
      return int8_k16_block<int(core::DType::kQ2_K)>(job, b);
    default:
      break;
  }
}

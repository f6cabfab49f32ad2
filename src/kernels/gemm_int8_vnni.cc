// The integer-dot GEMM (kernels/quant_dot.h) for AVX-512 with VNNI and VBMI, reading the
// panels in place (no repack, no buffer; AVX2 repacks, gemm_int8_impl.h):
//   - a quad of a panel (kernels/panel_layout.h: 4 consecutive inputs x 32 lanes, each lane's 4
//     bytes side by side) is two zmm, lanes 0-15 and 16-31, loaded as they are (until
//     kKernelVersion 60 the panels were byte-interleaved and a vpermt2b made each);
//   - vpermb gathers the f16 scales' two byte rows of 32 lanes into halves;
//   - vpdpbusd multiplies 4 unsigned weight bytes by 4 signed activation bytes and adds the 4
//     products to a 32-bit lane, exactly. Q8_0 quants are signed, so they enter as
//     w ^ 0x80 = w + 128 and each block sum starts from -128 * (the activations' block sum):
//     the result is sum(w * a) exactly, the same integer as every other ISA's;
//   - the float steps are gemm_scalar.cc's (int8_q8_0), in the same order.
// Built with -mavx512vnni -mavx512vbmi (CMakeLists.txt: *_vnni.cc) and reached only when the
// CPU has both (core::cpu_has_avx512_vnni()); other AVX-512 CPUs run the AVX2 kernels, to the
// same bits. Anonymous namespace, no std:: templates (see gemm_job.h).
#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/gemm_job.h"
#include "kernels/q3_k_codes.h"
#include "kernels/simd/force_inline.h"

namespace anchorage::kernels::isa_vnni {
namespace {

constexpr __mmask16 kAll = 0xffff;

inline __mmask16 lane_mask(int64_t n) {
  if (n >= 16) return kAll;
  if (n <= 0) return __mmask16(0);
  return __mmask16((1u << n) - 1u);
}

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

inline float load_f32(const uint8_t* p) {
  float v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

struct Perms {
  // vpermb indices over the two byte rows of 32 f16 scales (low bytes, then high bytes):
  // half l = bytes l and 32 + l.
  alignas(64) uint8_t halves[64];
  Perms() {
    for (int l = 0; l < 32; ++l) {
      halves[2 * l] = uint8_t(l);
      halves[2 * l + 1] = uint8_t(32 + l);
    }
  }
};
const Perms kPerms;

// The 32 lanes' f16 at byte rows 0 and 1 of p as f32, lanes 0-15 and 16-31 (exact; vcvtph2ps
// quiets a signalling NaN, which the multiply it then enters would do anyway).
ANCHORAGE_FORCE_INLINE void scales(const uint8_t* p, __m512i perm, __m512* d0, __m512* d1) {
  const __m512i h = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(p));
  *d0 = _mm512_maskz_cvtph_ps(kAll, _mm512_castsi512_si256(h));
  *d1 = _mm512_maskz_cvtph_ps(kAll, _mm512_extracti64x4_epi64(h, 1));
}

#include "kernels/simd/prefetch.h"

// The float step of every tile after a k block, in gemm_scalar.cc's order: per row and half,
// acc = fma(float(isum), d * dx, acc), dx the row's activation scale of block kb.
template <int R>
ANCHORAGE_FORCE_INLINE void add_block(__m512 (&acc)[R][2], const __m512i (&isum)[R][2], __m512 d0,
                                      __m512 d1, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
                                      int64_t kb) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
    acc[r][0] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, isum[r][0]), _mm512_mul_ps(d0, dx),
                                acc[r][0]);
    acc[r][1] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, isum[r][1]), _mm512_mul_ps(d1, dx),
                                acc[r][1]);
  }
}

// is[r] += w times the 4 activation bytes of row r at byte `at`, both 16-lane halves (vpdpbusd:
// exact int32 sums).
template <int R>
ANCHORAGE_FORCE_INLINE void dot_rows(__m512i (&is)[R][2], const __m512i (&w)[2],
                                     const uint8_t* xrow, int64_t ldq, int64_t at) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512i a = _mm512_set1_epi32(load_i32(xrow + r * ldq + at));
    is[r][0] = _mm512_dpbusd_epi32(is[r][0], w[0], a);
    is[r][1] = _mm512_dpbusd_epi32(is[r][1], w[1], a);
  }
}

// R rows' 32 outputs to y, the lanes from n_cols on left alone.
template <int R>
ANCHORAGE_FORCE_INLINE void store_rows(const __m512 (&acc)[R][2], float* y, int64_t ldy,
                                       int64_t n_cols) {
  const __mmask16 k0 = lane_mask(n_cols), k1 = lane_mask(n_cols - 16);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, k0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, k1, acc[r][1]);
  }
}

// Rows of a tile: 2R float accumulators + 2R block sums + 2 weight vectors + a broadcast +
// the 4 permutation / flip constants within 32 zmm.
constexpr int kMr = 4;

// R rows x one Q8_0 panel (34-byte-row k blocks of 32 lanes: d, then 32 quant rows) over all
// of K, from +0.0f. No software prefetch: with one, the 0.8B Q8_0 decode ran 52 tok/s against
// 61-66 without (docs/kernels.md "Prefetch"); this tile does the least work per byte of all, and
// the hardware prefetcher holds its stream alone.
template <int R>
void q8_0_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * 34;
    __m512i ia[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      ia[r][0] = ia[r][1] = _mm512_set1_epi32(-128 * load_i32(xrow + r * ldq + xs_off + 4 * kb));
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      // Quad g (bytes 2 + 4g ..): lanes 0-15, then 16-31.
      const __m512i w0 = _mm512_xor_si512(_mm512_loadu_si512(blk + 64 + 128 * g), flip);
      const __m512i w1 = _mm512_xor_si512(_mm512_loadu_si512(blk + 128 + 128 * g), flip);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512i a = _mm512_set1_epi32(load_i32(xrow + r * ldq + kb * 32 + 4 * g));
        ia[r][0] = _mm512_dpbusd_epi32(ia[r][0], w0, a);
        ia[r][1] = _mm512_dpbusd_epi32(ia[r][1], w1, a);
      }
    }
    __m512 d0, d1;
    scales(blk, ph, &d0, &d1);
    add_block<R>(acc, ia, d0, d1, xrow, ldq, xd_off, kb);
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

using Q8Tile = void (*)(const uint8_t*, int64_t, const uint8_t*, int64_t, int64_t, int64_t, float*,
                        int64_t, int64_t);

Q8Tile pick_q8_0(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q8_0_tile<1>;
    case 2: return &q8_0_tile<2>;
    case 3: return &q8_0_tile<3>;
    default: return &q8_0_tile<4>;
  }
  // clang-format on
}

// Panels outer, row tiles inner: a panel's k blocks are re-read from L1/L2 by each row tile.
void q8_0_block(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 32, pstride = nbt * 32 * 34;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; m += kMr) {
      const int r = int(b.m1 - m < kMr ? b.m1 - m : kMr);
      pick_q8_0(r)(panels + p * pstride, nbt, job.xq + m * job.ldq, job.ldq, job.xd_off, job.xs_off,
                   job.y + m * job.ldy + p * 32, job.ldy, job.N - p * 32);
    }
  }
}

// IQ4_NL's and IQ4_XS's 16 levels as level ^ 0x80 (unsigned for vpdpbusd), in each 128-bit lane.
ANCHORAGE_FORCE_INLINE __m512i iq4_table_flipped() {
  return _mm512_broadcast_i32x4(
      _mm_setr_epi8(char(-127 ^ 0x80), char(-104 ^ 0x80), char(-83 ^ 0x80), char(-65 ^ 0x80),
                    char(-49 ^ 0x80), char(-35 ^ 0x80), char(-22 ^ 0x80), char(-10 ^ 0x80),
                    char(1 ^ 0x80), char(13 ^ 0x80), char(25 ^ 0x80), char(38 ^ 0x80),
                    char(53 ^ 0x80), char(69 ^ 0x80), char(89 ^ 0x80), char(113 ^ 0x80)));
}

// R rows x one Q4_0, IQ4_NL, Q5_0, Q4_1 or Q5_1 panel (k blocks of 18-24 byte rows: d, for
// Q4_1 / Q5_1 the min m, for Q5_0 / Q5_1 the u32 of fifth bits, then 16 rows whose low / high
// nibbles are inputs e / 16 + e) over all of K, from +0.0f. Q4_0's nibble q enters unsigned and
// the block sum starts from -8 * a_sum (sum of (q - 8) * a); Q5_0's 5-bit code likewise with
// -16 * a_sum, its fifth bits added as 16 (each lane's qh byte for the group replicated over its
// 4 bytes by vpshufb, then one bit per byte tested); Q4_1 / Q5_1 from 0, then the min's step
// acc = fma(float(a_sum), m * dx, acc); IQ4_NL's level (vpshufb of the table) enters as
// level ^ 0x80 with -128 * a_sum, as Q8_0. No software prefetch, as q8_0_tile: without it the
// 0.8B decode of each of these types ran 0-12 % faster (docs/kernels.md "Prefetch").
template <int kType, int R>
void q4_32_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
                int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  constexpr bool kIq4 = kType == int(core::DType::kIQ4_NL);
  constexpr bool kMin = kType == int(core::DType::kQ4_1) || kType == int(core::DType::kQ5_1);
  constexpr bool kQ5 = kType == int(core::DType::kQ5_0) || kType == int(core::DType::kQ5_1);
  constexpr int kQh = kMin ? 4 : 2, kQs = kQh + (kQ5 ? 4 : 0), kBlockBytes = kQs + 16;
  constexpr int kOffset = kMin ? 0 : kIq4 ? -128 : kQ5 ? -16 : -8;
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
  const __m512i table = iq4_table_flipped();
  // vpshufb indices of byte 0 of each 32-bit lane, 4 times (add the byte wanted).
  const __m512i lane_base = _mm512_set4_epi32(0x0c0c0c0c, 0x08080808, 0x04040404, 0);
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * kBlockBytes;
    __m512i ia[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      ia[r][0] = ia[r][1] = _mm512_set1_epi32(kOffset * load_i32(xrow + r * ldq + xs_off + 4 * kb));
    __m512i qh[2];  // Q5_0: each lane's u32 of fifth bits
    if (kQ5) {      // a quad
      qh[0] = _mm512_loadu_si512(blk + kQh * 32);
      qh[1] = _mm512_loadu_si512(blk + kQh * 32 + 64);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      __m512i w[2][2];  // [low / high nibble][lanes 0-15 / 16-31]
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        const __m512i t = _mm512_loadu_si512(blk + (kQs + 4 * g) * 32 + 64 * c);  // a quad
        w[0][c] = _mm512_and_si512(t, m0f);
        w[1][c] = _mm512_and_si512(_mm512_srli_epi16(t, 4), m0f);
        if (kIq4) {
          w[0][c] = _mm512_shuffle_epi8(table, w[0][c]);
          w[1][c] = _mm512_shuffle_epi8(table, w[1][c]);
        }
        if (kQ5) {
          // Inputs 4g + t (low) and 16 + 4g + t (high): bit 4(g % 2) + t of qh bytes g / 2 and
          // 2 + g / 2.
          const __m512i bits = _mm512_set1_epi32(g % 2 ? int(0x80402010) : 0x08040201);
          const __m512i rl =
              _mm512_shuffle_epi8(qh[c], _mm512_add_epi8(lane_base, _mm512_set1_epi8(char(g / 2))));
          const __m512i rh = _mm512_shuffle_epi8(
              qh[c], _mm512_add_epi8(lane_base, _mm512_set1_epi8(char(2 + g / 2))));
          w[0][c] = _mm512_mask_add_epi8(w[0][c], _mm512_test_epi8_mask(rl, bits), w[0][c], m10);
          w[1][c] = _mm512_mask_add_epi8(w[1][c], _mm512_test_epi8_mask(rh, bits), w[1][c], m10);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const uint8_t* a = xrow + r * ldq + kb * 32 + 4 * g;
        const __m512i alo = _mm512_set1_epi32(load_i32(a)),
                      ahi = _mm512_set1_epi32(load_i32(a + 16));
        ia[r][0] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ia[r][0], w[0][0], alo), w[1][0], ahi);
        ia[r][1] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ia[r][1], w[0][1], alo), w[1][1], ahi);
      }
    }
    __m512 d0, d1;
    scales(blk, ph, &d0, &d1);
    add_block<R>(acc, ia, d0, d1, xrow, ldq, xd_off, kb);
    if (kMin) {
      __m512 m0, m1;
      scales(blk + 64, ph, &m0, &m1);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
        const __m512 sum = _mm512_set1_ps(float(load_i32(xrow + r * ldq + xs_off + 4 * kb)));
        acc[r][0] = _mm512_fmadd_ps(sum, _mm512_mul_ps(m0, dx), acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(sum, _mm512_mul_ps(m1, dx), acc[r][1]);
      }
    }
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

template <int kType>
void q4_32_block(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t block_bytes = kType == int(core::DType::kQ5_0)   ? 22
                              : kType == int(core::DType::kQ4_1) ? 20
                              : kType == int(core::DType::kQ5_1) ? 24
                                                                 : 18;
  const int64_t nbt = job.K / 32, pstride = nbt * 32 * block_bytes;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; m += kMr) {
      const int r = int(b.m1 - m < kMr ? b.m1 - m : kMr);
      const Q8Tile fn = r == 1   ? &q4_32_tile<kType, 1>
                        : r == 2 ? &q4_32_tile<kType, 2>
                        : r == 3 ? &q4_32_tile<kType, 3>
                                 : &q4_32_tile<kType, 4>;
      fn(panels + p * pstride, nbt, job.xq + m * job.ldq, job.ldq, job.xd_off, job.xs_off,
         job.y + m * job.ldy + p * 32, job.ldy, job.N - p * 32);
    }
  }
}

// Q4_K: rows of a tile (2R accumulators, 2R scaled sums, 4R sub-block sums, the quads and their
// nibbles, the constants: within 32 zmm).
constexpr int kMrQ4K = 2;

// The 8 sub-blocks' 6-bit scales and mins of a Q4_K k block's 32 lanes (byte rows 4-15) as
// int32 [8][32], computed as kernels/quant.cc's q4k_scale_min on 32-bit lanes.
ANCHORAGE_FORCE_INLINE void q4_k_scales(const uint8_t* blk, int32_t (*sc)[32], int32_t (*mn)[32]) {
  const __m512i m63 = _mm512_set1_epi32(63), m15 = _mm512_set1_epi32(15);
  for (int h = 0; h < 2; ++h) {
    __m512i s[12];
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i)
      s[i] = _mm512_maskz_cvtepu8_epi32(
          kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + (4 + i) * 32 + 16 * h)));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      __m512i c, m;
      if (j < 4) {
        c = _mm512_and_si512(s[j], m63);
        m = _mm512_and_si512(s[j + 4], m63);
      } else {
        c = _mm512_or_si512(_mm512_and_si512(s[j + 4], m15),
                            _mm512_slli_epi32(_mm512_srli_epi32(s[j - 4], 6), 4));
        m = _mm512_or_si512(_mm512_srli_epi32(s[j + 4], 4),
                            _mm512_slli_epi32(_mm512_srli_epi32(s[j], 6), 4));
      }
      _mm512_store_si512(sc[j] + 16 * h, c);
      _mm512_store_si512(mn[j] + 16 * h, m);
    }
  }
}

// R rows x one Q4_K panel (144-byte-row k blocks: d, dmin, 12 scale rows, 128 quant rows whose
// low / high nibbles are sub-blocks 2i / 2i + 1, in quads: read as they are) over all of K, from
// +0.0f. Q5_K (kQ5: 176-byte rows, 32 rows of fifth bits qh before the nibbles, quads too) adds 16
// to the code of input e of sub-block j where bit j of qh row e is set (a byte test and a masked
// add): codes <= 31, still unsigned for vpdpbusd. No software prefetch: a block is read nearly
// in address order (the scale rows, then the quads), which the hardware prefetcher follows; the
// prefetch into L2 held one thread at ~0.7 of a plain read (docs/kernels.md "Q4_K and Q5_K
// without the prefetch").
template <int R, bool kQ5>
void q4_k_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  constexpr int kBlockBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
  alignas(64) int32_t sc[8][32], mn[8][32];
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * kBlockBytes;
    q4_k_scales(blk, sc, mn);
    __m512i S[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r][0] = S[r][1] = _mm512_setzero_si512();
    for (int i = 0; i < 4; ++i) {
      __m512i lo[R][2], hi[R][2];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        lo[r][0] = lo[r][1] = hi[r][0] = hi[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        // A quad of inputs (kernels/panel_layout.h): lanes 0-15, then 16-31, 4 bytes each.
        const uint8_t* q = blk + (kQs + 32 * i + 4 * g) * 32;
        const __m512i t0 = _mm512_loadu_si512(q), t1 = _mm512_loadu_si512(q + 64);
        __m512i l0 = _mm512_and_si512(t0, m0f), l1 = _mm512_and_si512(t1, m0f);
        __m512i h0 = _mm512_and_si512(_mm512_srli_epi16(t0, 4), m0f);
        __m512i h1 = _mm512_and_si512(_mm512_srli_epi16(t1, 4), m0f);
        if (kQ5) {
          const uint8_t* qh = blk + (16 + 4 * g) * 32;
          const __m512i u0 = _mm512_loadu_si512(qh), u1 = _mm512_loadu_si512(qh + 64);
          const __m512i bl = _mm512_set1_epi8(char(1 << (2 * i)));
          const __m512i bh = _mm512_set1_epi8(char(2 << (2 * i)));
          l0 = _mm512_mask_add_epi8(l0, _mm512_test_epi8_mask(u0, bl), l0, m10);
          l1 = _mm512_mask_add_epi8(l1, _mm512_test_epi8_mask(u1, bl), l1, m10);
          h0 = _mm512_mask_add_epi8(h0, _mm512_test_epi8_mask(u0, bh), h0, m10);
          h1 = _mm512_mask_add_epi8(h1, _mm512_test_epi8_mask(u1, bh), h1, m10);
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const uint8_t* a = xrow + r * ldq + kb * 256 + 64 * i + 4 * g;
          const __m512i alo = _mm512_set1_epi32(load_i32(a));
          const __m512i ahi = _mm512_set1_epi32(load_i32(a + 32));
          lo[r][0] = _mm512_dpbusd_epi32(lo[r][0], l0, alo);
          lo[r][1] = _mm512_dpbusd_epi32(lo[r][1], l1, alo);
          hi[r][0] = _mm512_dpbusd_epi32(hi[r][0], h0, ahi);
          hi[r][1] = _mm512_dpbusd_epi32(hi[r][1], h1, ahi);
        }
      }
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i cl = _mm512_load_si512(sc[2 * i] + 16 * h);
        const __m512i ch = _mm512_load_si512(sc[2 * i + 1] + 16 * h);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          S[r][h] = _mm512_add_epi32(S[r][h], _mm512_add_epi32(_mm512_mullo_epi32(lo[r][h], cl),
                                                               _mm512_mullo_epi32(hi[r][h], ch)));
      }
    }
    __m512 d0, d1, m0, m1;
    scales(blk, ph, &d0, &d1);
    scales(blk + 64, ph, &m0, &m1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const int32_t* s16 = reinterpret_cast<const int32_t*>(xrow + r * ldq + xs_off) + kb * 16;
      __m512i Mn[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m512i sj = _mm512_set1_epi32(s16[2 * j] + s16[2 * j + 1]);
        Mn[0] = _mm512_add_epi32(Mn[0], _mm512_mullo_epi32(_mm512_load_si512(mn[j]), sj));
        Mn[1] = _mm512_add_epi32(Mn[1], _mm512_mullo_epi32(_mm512_load_si512(mn[j] + 16), sj));
      }
      const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
      acc[r][0] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, S[r][0]), _mm512_mul_ps(d0, dx),
                                  acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, S[r][1]), _mm512_mul_ps(d1, dx),
                                  acc[r][1]);
      acc[r][0] =
          _mm512_fnmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, Mn[0]), _mm512_mul_ps(m0, dx), acc[r][0]);
      acc[r][1] =
          _mm512_fnmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, Mn[1]), _mm512_mul_ps(m1, dx), acc[r][1]);
    }
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

// Panels outer, row tiles of at most 2 rows inner, over 256-blocks of kBlockBytes-byte rows:
// Q4_K and Q5_K (q4_k_tile), IQ4_XS (iq4_xs_tile), Q6_K (q6_k_tile).
template <int64_t kBlockBytes, Q8Tile kOne, Q8Tile kTwo>
void k256_block(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 256, pstride = nbt * 32 * kBlockBytes;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; m += kMrQ4K) {
      const bool two = b.m1 - m >= 2;
      (two ? kTwo : kOne)(panels + p * pstride, nbt, job.xq + m * job.ldq, job.ldq, job.xd_off,
                          job.xs_off, job.y + m * job.ldy + p * 32, job.ldy, job.N - p * 32);
    }
  }
}

// IQ4_XS sub-blocks' scales ls - 32 (ls: the low 4 bits in nibble j % 2 of byte row 4 + j / 2,
// the high 2 at bits 2j, 2j + 1 of the u16 in rows 2-3) of a k block's 32 lanes as int32 [8][32].
ANCHORAGE_FORCE_INLINE void iq4_xs_scales(const uint8_t* blk, int32_t (*sc)[32]) {
  const __m512i m15 = _mm512_set1_epi32(15), m3 = _mm512_set1_epi32(3);
  const __m512i m32 = _mm512_set1_epi32(32);
  for (int h = 0; h < 2; ++h) {
    __m512i s[6];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i)
      s[i] = _mm512_maskz_cvtepu8_epi32(
          kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + (2 + i) * 32 + 16 * h)));
    const __m512i sh = _mm512_or_si512(s[0], _mm512_slli_epi32(s[1], 8));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(s[2 + j / 2], 4 * (j % 2)), m15);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(sh, 2 * j), m3);
      _mm512_store_si512(sc[j] + 16 * h,
                         _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), m32));
    }
  }
}

// R rows x one IQ4_XS panel (136-byte-row k blocks: d, scales_h, scales_l, then sub-block j's
// 16 code rows at row 8 + 16j whose low / high nibbles are its inputs e / 16 + e) over all of K,
// from +0.0f. The level enters as level ^ 0x80 (vpshufb of the table) with the sub-block sum
// started from -128 * the activations' sum over it, as IQ4_NL; S = sum_j (ls_j - 32) * isum_j.
// It keeps its prefetch: without it its layer calls streamed faster (0.74 -> 0.95 of a plain
// read on one thread) but the 0.8B decode was no faster (docs/kernels.md "Q4_K and Q5_K without
// the prefetch").
template <int R>
void iq4_xs_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq,
                 int64_t xd_off, int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f);
  const __m512i table = iq4_table_flipped();
  alignas(64) int32_t sc[8][32];
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * 136;
    iq4_xs_scales(blk, sc);
    __m512i S[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r][0] = S[r][1] = _mm512_setzero_si512();
    for (int j = 0; j < 8; ++j) {
      __m512i ia[R][2];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int32_t* s16 = reinterpret_cast<const int32_t*>(xrow + r * ldq + xs_off) + kb * 16;
        ia[r][0] = ia[r][1] = _mm512_set1_epi32(-128 * (s16[2 * j] + s16[2 * j + 1]));
      }
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        prefetch_part<kToL2>(blk + 32 * 136, 32 * 136, 32, 4 * j + g);
        const uint8_t* q = blk + (8 + 16 * j + 4 * g) * 32;  // a quad
        __m512i w[2][2];  // [low / high nibble][lanes 0-15 / 16-31]
#pragma GCC unroll 2
        for (int c = 0; c < 2; ++c) {
          const __m512i t = _mm512_loadu_si512(q + 64 * c);
          w[0][c] = _mm512_shuffle_epi8(table, _mm512_and_si512(t, m0f));
          w[1][c] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(t, 4), m0f));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const uint8_t* a = xrow + r * ldq + kb * 256 + 32 * j + 4 * g;
          const __m512i alo = _mm512_set1_epi32(load_i32(a)),
                        ahi = _mm512_set1_epi32(load_i32(a + 16));
          ia[r][0] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ia[r][0], w[0][0], alo), w[1][0], ahi);
          ia[r][1] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ia[r][1], w[0][1], alo), w[1][1], ahi);
        }
      }
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i c = _mm512_load_si512(sc[j] + 16 * h);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          S[r][h] = _mm512_add_epi32(S[r][h], _mm512_mullo_epi32(ia[r][h], c));
      }
    }
    __m512 d0, d1;
    scales(blk, ph, &d0, &d1);
    add_block<R>(acc, S, d0, d1, xrow, ldq, xd_off, kb);
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

// R rows x one Q6_K panel (210-byte-row k blocks: 128 rows of low nibbles ql, 64 of high bit
// pairs qh, both in quads, 16 of int8 scales, d; GGUF's numbers, each row where q6_k_row puts
// it: in the order this tile reads them, so it streams without a software prefetch, which had
// held it at 0.74-0.78 of a plain read on one thread, docs/kernels.md "Q6_K's rows in reading
// order") over all of K, from +0.0f. Each quad of ql and
// qh is loaded once (inputs 128h + 32t + e read ql row 64h + 32(t % 2) + e and qh row
// 128 + 32h + e for all four t), then the 6-bit codes of the four t are assembled from it (the
// nibble, and the bit pair shifted to bits 4-5), multiplied as unsigned, and the 32 offset is
// taken out of each exact sub-block sum with the activations' sum of the sub-block. The
// integer sums are exact, so their order is free; the float steps are gemm_scalar.cc's.
template <int R>
void q6_k_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * 210;
    __m512i S[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r][0] = S[r][1] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
      for (int sub = 0; sub < 2; ++sub) {
        __m512i is[4][R][2];  // [t]: sub-block 8h + 2t + sub
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) is[t][r][0] = is[t][r][1] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int g = 4 * sub; g < 4 * sub + 4; ++g) {
          const uint8_t* ql0 = blk + q6_k_row(64 * h + 4 * g) * 32;
          const uint8_t* ql1 = blk + q6_k_row(64 * h + 32 + 4 * g) * 32;
          const uint8_t* qh = blk + q6_k_row(128 + 32 * h + 4 * g) * 32;
          __m512i l0[2], l1[2], u[2];
#pragma GCC unroll 2
          for (int c = 0; c < 2; ++c) {  // quads: lanes 0-15, then 16-31
            l0[c] = _mm512_loadu_si512(ql0 + 64 * c);
            l1[c] = _mm512_loadu_si512(ql1 + 64 * c);
            u[c] = _mm512_loadu_si512(qh + 64 * c);
          }
#pragma GCC unroll 4
          for (int t = 0; t < 4; ++t) {
            __m512i q[2];
#pragma GCC unroll 2
            for (int c = 0; c < 2; ++c) {
              const __m512i l = t % 2 == 0 ? l0[c] : l1[c];
              const __m512i nib = _mm512_and_si512(t < 2 ? l : _mm512_srli_epi16(l, 4), m0f);
              const __m512i up =
                  t < 2 ? _mm512_slli_epi16(u[c], 4 - 2 * t) : _mm512_srli_epi16(u[c], 2 * t - 4);
              q[c] = _mm512_ternarylogic_epi32(nib, up, m30, 0xf8);  // nib | (up & m30)
            }
            dot_rows<R>(is[t], q, xrow, ldq, kb * 256 + 128 * h + 32 * t + 4 * g);
          }
        }
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
          const int j = 8 * h + 2 * t + sub;
          const __m512i sc0 = _mm512_maskz_cvtepi8_epi32(
              kAll,
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + q6_k_row(192 + j) * 32)));
          const __m512i sc1 = _mm512_maskz_cvtepi8_epi32(
              kAll,
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + q6_k_row(192 + j) * 32 + 16)));
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const __m512i off =
                _mm512_set1_epi32(32 * load_i32(xrow + r * ldq + xs_off + 4 * (kb * 16 + j)));
            S[r][0] = _mm512_add_epi32(S[r][0],
                                       _mm512_mullo_epi32(_mm512_sub_epi32(is[t][r][0], off), sc0));
            S[r][1] = _mm512_add_epi32(S[r][1],
                                       _mm512_mullo_epi32(_mm512_sub_epi32(is[t][r][1], off), sc1));
          }
        }
      }
    }
    __m512 d0, d1;
    scales(blk + q6_k_row(208) * 32, ph, &d0, &d1);
    add_block<R>(acc, S, d0, d1, xrow, ldq, xd_off, kb);
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

// Q3_K's sub-blocks' scales sc - 32 (6 bits: the low nibble of byte row 96 + j % 8, high for
// j >= 8, and bits 2(j / 4), 2(j / 4) + 1 of row 104 + j % 4) or Q2_K's scales and mins (the low
// and high nibble of byte row j) of a k block's 32 lanes as int32 [16][32].
template <bool kQ3>
ANCHORAGE_FORCE_INLINE void q3_q2_k_scales(const uint8_t* blk, int32_t (*sc)[32],
                                           int32_t (*mn)[32]) {
  const __m512i m15 = _mm512_set1_epi32(15), m3 = _mm512_set1_epi32(3);
  const __m512i m32 = _mm512_set1_epi32(32);
  for (int h = 0; h < 2; ++h) {
    __m512i sb[16];
#pragma GCC unroll 16
    for (int i = 0; i < (kQ3 ? 12 : 16); ++i)
      sb[i] = _mm512_maskz_cvtepu8_epi32(
          kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(
                    blk + q3_q2_k_row<kQ3>((kQ3 ? 96 : 0) + i) * 32 + 16 * h)));
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      if (kQ3) {
        const __m512i lo = j < 8 ? _mm512_and_si512(sb[j], m15) : _mm512_srli_epi32(sb[j - 8], 4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(sb[8 + j % 4], 2 * (j / 4)), m3);
        _mm512_store_si512(sc[j] + 16 * h,
                           _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), m32));
      } else {
        _mm512_store_si512(sc[j] + 16 * h, _mm512_and_si512(sb[j], m15));
        _mm512_store_si512(mn[j] + 16 * h, _mm512_srli_epi32(sb[j], 4));
      }
    }
  }
}

// Q3_K's 16 sub-blocks' scales sc - 32 of a k block's 32 lanes as int16 [16][32], two
// sub-blocks (64 bytes) at a time in bytes: the low 4 bits from the low nibble of byte row 96 +
// j % 8 (high nibble for j >= 8), the high 2 from bits 2(j / 4), 2(j / 4) + 1 of row 104 + j % 4.
// Rows j and j + 1 (j even) of both kinds are adjacent, so one zmm holds the pair's.
ANCHORAGE_FORCE_INLINE void q3_k_scale_words(const uint8_t* blk, int16_t (*scw)[32]) {
  const __m512i m0f = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
  const __m512i m32 = _mm512_set1_epi8(32);
  __m512i r[6];  // byte rows 96 + 2i and 97 + 2i
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) r[i] = _mm512_loadu_si512(blk + q3_k_row(96 + 2 * i) * 32);
#pragma GCC unroll 8
  for (int j = 0; j < 16; j += 2) {
    const __m512i l = r[(j % 8) / 2], h = r[4 + (j % 4) / 2];
    const __m512i lo = _mm512_and_si512(j < 8 ? l : _mm512_srli_epi16(l, 4), m0f);
    const int s = 2 * (j / 4);  // the bit pair's place, moved to bits 4-5 (16-bit shifts: bits
                                // 4-5 of a byte come from its own byte)
    const __m512i hi = s <= 4 ? _mm512_slli_epi16(h, 4 - s) : _mm512_srli_epi16(h, s - 4);
    const __m512i sc = _mm512_sub_epi8(_mm512_ternarylogic_epi32(lo, hi, m30, 0xf8), m32);
    _mm512_store_si512(scw[j], _mm512_cvtepi8_epi16(_mm512_castsi512_si256(sc)));
    _mm512_store_si512(scw[j + 1], _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(sc, 1)));
  }
}

// The power of two Q3_K's code of inputs 128h + 32t + slot enters the multiplies scaled by: the
// bit its 3-bit field starts at in the slot's code bytes (kernels/q3_k_codes.h), or for t = 2,
// whose field is split, where q3_k_code_scaled puts it.
constexpr int q3_k_code_exp(int h, int t) {
  return t == 2 ? 4 + h : t == 3 ? 3 * h : 3 * t;
}

// Q3_K's codes of inputs 128h + 32t + 4g .. + 3 times 2^q3_k_code_exp(h, t), from the slot
// group's code quads: x its A (h = 0) or B quad, c its C quad. Six of the eight are a field
// masked in place; t = 2 moves the low pair down to sit below its high bit (bit 6 + h of c):
// one 16-bit shift, every bit kept from its own byte. 7 * 2^5 fits the unsigned byte vpdpbusd
// reads.
ANCHORAGE_FORCE_INLINE __m512i q3_k_code_scaled(__m512i x, __m512i c, int h, int t) {
  if (t == 2) {  // (x >> (2 - h)) & (3 << (4 + h)) | c & (4 << (4 + h))
    const __m512i pair =
        _mm512_and_si512(_mm512_srli_epi16(x, 2 - h), _mm512_set1_epi8(char(3 << (4 + h))));
    return _mm512_ternarylogic_epi32(pair, c, _mm512_set1_epi8(char(4 << (4 + h))), 0xf8);
  }
  return _mm512_and_si512(t == 3 ? c : x, _mm512_set1_epi8(char(7 << q3_k_code_exp(h, t))));
}

// R rows x one Q3_K (kQ3; 110-byte-row k blocks: codes 0-95, scales 96-107, d 108-109) or Q2_K
// (84-byte rows: scales 0-15, qs 16-79, d 80-81, dmin 82-83; GGUF's numbers, each row where
// q3_q2_k_row puts it) panel over all of K, from +0.0f.
// Q2_K's input 128h + 32s + l is bits 2s, 2s + 1 of qs row 32h + l; Q3_K's is the code (h, s)
// of slot l's code bytes (kernels/q3_k_codes.h: rows l, 32 + l, 64 + l), the weight being
// code - 4; the codes of the four s are taken from each quad of 4 slots loaded once,
// multiplied as unsigned times a power of two (Q2_K's masked in place, times 4^s; Q3_K's by
// q3_k_code_scaled), each sub-block's sum shifted back, exactly, and Q3_K's offset 4 taken out
// of it with the activations' sum of the sub-block. Q2_K adds its mins' step as Q4_K does.
// A sub-block's sum then fits in 16 bits (|sum| <= 16 * 4 * 128 for Q3_K after its offset,
// 16 * 3 * 128 for Q2_K), so one vpdpwssd of it by the scale as the int16 pair (sc, 0) scales
// it and adds it to the block's sum (where a vpmulld and a vpaddd were, from int32 scales
// stored per block); Q2_K's mins likewise, (m, 0) by the activations' sum (|s| <= 16 * 128).
// The integer sums are exact, so their order is free; the float steps are gemm_scalar.cc's
// (the AVX2 tile's).
template <int R, bool kQ3>
void q3_q2_k_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq,
                  int64_t xd_off, int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  constexpr int kBlockBytes = kQ3 ? 110 : 84, kQs = kQ3 ? 0 : 16, kOff = kQ3 ? 4 : 0;
  // No software prefetch: the panels keep a block's rows in the order this loop reads them
  // (kernels/q3_k_codes.h), one ascending stream the hardware prefetcher holds alone, where the
  // software prefetches cost Q3_K 10-36 % of its speed and held Q2_K at ~0.7 of a plain read
  // (docs/kernels.md "Q3_K's rows in reading order", "Q2_K's rows in reading order").
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m15 = _mm512_set1_epi32(15);
  alignas(64) int16_t scw[kQ3 ? 16 : 1][32];  // Q3_K: the sub-blocks' sc - 32
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * kBlockBytes;
    if constexpr (kQ3) q3_k_scale_words(blk, scw);
    __m512i S[R][2], Mn[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r][0] = S[r][1] = Mn[r][0] = Mn[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
      for (int sub = 0; sub < 2; ++sub) {
        __m512i is[4][R][2];  // [s]: sub-block 8h + 2s + sub
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) is[t][r][0] = is[t][r][1] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int g = 4 * sub; g < 4 * sub + 4; ++g) {
          // Quads: Q2_K's qs or Q3_K's A (h = 0) or B codes of slots 4g .. 4g + 3 (lanes 0-15,
          // then 16-31), and Q3_K's C quad g, which serves both halves of the block: loaded
          // again for each (kept for the block they took 16 registers, and the spills cost more).
          const uint8_t* q = blk + q3_q2_k_row<kQ3>(kQs + 32 * h + 4 * g) * 32;
          __m512i v[2], u[2];
#pragma GCC unroll 2
          for (int c = 0; c < 2; ++c) {
            v[c] = _mm512_loadu_si512(q + 64 * c);
            if constexpr (kQ3) u[c] = _mm512_loadu_si512(blk + q3_k_row(64 + 4 * g) * 32 + 64 * c);
          }
#pragma GCC unroll 4
          for (int t = 0; t < 4; ++t) {
            __m512i code[2];
#pragma GCC unroll 2
            for (int c = 0; c < 2; ++c) {
              code[c] = kQ3 ? q3_k_code_scaled(v[c], u[c], h, t)
                            : _mm512_and_si512(v[c], _mm512_set1_epi8(char(3 << 2 * t)));
            }
            dot_rows<R>(is[t], code, xrow, ldq, kb * 256 + 128 * h + 32 * t + 4 * g);
          }
        }
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
          const int j = 8 * h + 2 * t + sub;
          __m512i sc16[2], mn16[2];  // lanes 0-15 and 16-31 as the int16 pairs (sc, 0), (m, 0)
#pragma GCC unroll 2
          for (int c = 0; c < 2; ++c) {
            if constexpr (kQ3) {
              sc16[c] = _mm512_cvtepu16_epi32(
                  _mm256_load_si256(reinterpret_cast<const __m256i*>(scw[j] + 16 * c)));
            } else {  // Q2_K: the scale in the low nibble of byte row j, the min in the high
              const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(
                  reinterpret_cast<const __m128i*>(blk + q2_k_row(j) * 32 + 16 * c)));
              sc16[c] = _mm512_and_si512(b, m15);
              mn16[c] = _mm512_srli_epi32(b, 4);
            }
          }
          // The codes entered times 2^e: every sum is a multiple of it, so the shift is exact.
          const int e = kQ3 ? q3_k_code_exp(h, t) : 2 * t;
          const auto unscaled = [e](__m512i x) { return e ? _mm512_srai_epi32(x, e) : x; };
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const int32_t s = load_i32(xrow + r * ldq + xs_off + 4 * (kb * 16 + j));
            const __m512i i0 = unscaled(is[t][r][0]), i1 = unscaled(is[t][r][1]);
            if constexpr (kQ3) {
              const __m512i off = _mm512_set1_epi32(kOff * s);
              S[r][0] = _mm512_dpwssd_epi32(S[r][0], _mm512_sub_epi32(i0, off), sc16[0]);
              S[r][1] = _mm512_dpwssd_epi32(S[r][1], _mm512_sub_epi32(i1, off), sc16[1]);
            } else {
              const __m512i sj = _mm512_set1_epi32(s);
              S[r][0] = _mm512_dpwssd_epi32(S[r][0], i0, sc16[0]);
              S[r][1] = _mm512_dpwssd_epi32(S[r][1], i1, sc16[1]);
              Mn[r][0] = _mm512_dpwssd_epi32(Mn[r][0], mn16[0], sj);
              Mn[r][1] = _mm512_dpwssd_epi32(Mn[r][1], mn16[1], sj);
            }
          }
        }
      }
    }
    __m512 d0, d1;
    scales(blk + q3_q2_k_row<kQ3>(kQ3 ? 108 : 80) * 32, ph, &d0, &d1);
    add_block<R>(acc, S, d0, d1, xrow, ldq, xd_off, kb);
    if (!kQ3) {
      __m512 m0, m1;
      scales(blk + q2_k_row(82) * 32, ph, &m0, &m1);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
        acc[r][0] = _mm512_fnmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, Mn[r][0]),
                                     _mm512_mul_ps(m0, dx), acc[r][0]);
        acc[r][1] = _mm512_fnmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, Mn[r][1]),
                                     _mm512_mul_ps(m1, dx), acc[r][1]);
      }
    }
  }
  store_rows<R>(acc, y, ldy, n_cols);
}

// --- Prefill: a k block's codes assembled once for a block of rows -------------------------
// The in-place tiles above assemble every group's codes again for each tile of 1-2 rows; at
// prefill that costs more than the multiplies (Q4_K's prefill ran at 0.6-0.7 of the f32
// chain's). A block of kCodesMinRows rows or more assembles each k block of a panel once into
// KCodes (12 KiB, in L1) and runs tiles of up to 4 rows over it: a load and a vpdpbusd per row
// and group. The integer sums and the float steps are the in-place tiles', and the partial sums
// pass through y between k blocks (an f32 store / load is exact): the same bits.
constexpr int64_t kCodesMinRows = 3;

struct KCodes {
  alignas(64) uint8_t q[64][2][64];  // input group i (inputs 4i .. 4i+3) of lanes 16c .. 16c+15
  alignas(64) int32_t sc[16][32];    // per sub-block: the scale (Q3_K: sc - 32), as int32
  alignas(64) int32_t mn[16][32];    // per sub-block: the min (Q4_K, Q5_K, Q2_K)
  alignas(64) float d[32];
  alignas(64) float dmin[32];
};

ANCHORAGE_FORCE_INLINE void store_f16_scales(const uint8_t* p, __m512i perm, float* out) {
  __m512 lo, hi;
  scales(p, perm, &lo, &hi);
  _mm512_store_ps(out, lo);
  _mm512_store_ps(out + 16, hi);
}

// Q4_K / Q5_K (as q4_k_tile): sub-block 2i's codes are the low nibbles of rows kQs + 32i + e,
// 2i + 1's the high ones; input group 16i + g (2i) and 16i + 8 + g (2i + 1).
template <bool kQ5>
void codes_q4_k(const uint8_t* blk, KCodes* k) {
  constexpr int kBlockBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
  q4_k_scales(blk, k->sc, k->mn);
  store_f16_scales(blk, ph, k->d);
  store_f16_scales(blk + 64, ph, k->dmin);
  for (int i = 0; i < 4; ++i) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      prefetch_part<kToL1>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 32, 8 * i + g);
      const uint8_t* q = blk + (kQs + 32 * i + 4 * g) * 32;  // a quad: lanes 0-15, 16-31
      __m512i u[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
      if (kQ5) {
        const uint8_t* qh = blk + (16 + 4 * g) * 32;
        u[0] = _mm512_loadu_si512(qh);
        u[1] = _mm512_loadu_si512(qh + 64);
      }
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        const __m512i t = _mm512_loadu_si512(q + 64 * c);
        __m512i lo = _mm512_and_si512(t, m0f);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(t, 4), m0f);
        if (kQ5) {
          lo = _mm512_mask_add_epi8(
              lo, _mm512_test_epi8_mask(u[c], _mm512_set1_epi8(char(1 << (2 * i)))), lo, m10);
          hi = _mm512_mask_add_epi8(
              hi, _mm512_test_epi8_mask(u[c], _mm512_set1_epi8(char(2 << (2 * i)))), hi, m10);
        }
        _mm512_store_si512(k->q[16 * i + g][c], lo);
        _mm512_store_si512(k->q[16 * i + 8 + g][c], hi);
      }
    }
  }
}

// Q6_K (as q6_k_tile): inputs 128h + 32t + 4g .. + 3 are input group 32h + 8t + g.
void codes_q6_k(const uint8_t* blk, KCodes* k) {
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
  for (int j = 0; j < 16; ++j)
    for (int c = 0; c < 2; ++c)
      _mm512_store_si512(
          k->sc[j] + 16 * c,
          _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                               blk + q6_k_row(192 + j) * 32 + 16 * c))));
  store_f16_scales(blk + q6_k_row(208) * 32, ph, k->d);
  for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      prefetch_part<kToL1>(blk + 32 * 210, 32 * 210, 16, 8 * h + g);
      const uint8_t* ql0 = blk + q6_k_row(64 * h + 4 * g) * 32;
      const uint8_t* ql1 = blk + q6_k_row(64 * h + 32 + 4 * g) * 32;
      const uint8_t* qh = blk + q6_k_row(128 + 32 * h + 4 * g) * 32;
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        const __m512i l0 = _mm512_loadu_si512(ql0 + 64 * c);  // quads: lanes 16c .. 16c + 15
        const __m512i l1 = _mm512_loadu_si512(ql1 + 64 * c);
        const __m512i u = _mm512_loadu_si512(qh + 64 * c);
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
          const __m512i l = t % 2 == 0 ? l0 : l1;
          const __m512i nib = _mm512_and_si512(t < 2 ? l : _mm512_srli_epi16(l, 4), m0f);
          const __m512i up =
              t < 2 ? _mm512_slli_epi16(u, 4 - 2 * t) : _mm512_srli_epi16(u, 2 * t - 4);
          _mm512_store_si512(k->q[32 * h + 8 * t + g][c],
                             _mm512_ternarylogic_epi32(nib, up, m30, 0xf8));
        }
      }
    }
  }
}

// Q3_K / Q2_K (as q3_q2_k_tile): inputs 128h + 32t + 4g .. + 3 are input group 32h + 8t + g.
template <bool kQ3>
void codes_q3_q2_k(const uint8_t* blk, KCodes* k) {
  constexpr int kBlockBytes = kQ3 ? 110 : 84, kQs = kQ3 ? 0 : 16;
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m3 = _mm512_set1_epi8(3);
  q3_q2_k_scales<kQ3>(blk, k->sc, k->mn);
  store_f16_scales(blk + q3_q2_k_row<kQ3>(kQ3 ? 108 : 80) * 32, ph, k->d);
  if (!kQ3) store_f16_scales(blk + q2_k_row(82) * 32, ph, k->dmin);
  for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      prefetch_part<kToL1>(blk + 32 * kBlockBytes, 32 * kBlockBytes, 16, 8 * h + g);
      const uint8_t* q = blk + q3_q2_k_row<kQ3>(kQs + 32 * h + 4 * g) * 32;  // Q3_K: A or B quad
      const uint8_t* cq = blk + q3_k_row(64 + 4 * g) * 32;                   // Q3_K: the C quad
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        const __m512i v = _mm512_loadu_si512(q + 64 * c);  // quads: lanes 16c .. 16c + 15
        __m512i u = _mm512_setzero_si512();
        if (kQ3) u = _mm512_loadu_si512(cq + 64 * c);
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
          // Q3_K's code scaled as the tile's, shifted back: the code itself (0-7).
          const __m512i code =
              kQ3 ? _mm512_srli_epi16(q3_k_code_scaled(v, u, h, t), q3_k_code_exp(h, t))
                  : _mm512_and_si512(_mm512_srli_epi16(v, 2 * t), m3);
          _mm512_store_si512(k->q[32 * h + 8 * t + g][c], code);
        }
      }
    }
  }
}

// IQ4_XS (as iq4_xs_tile): sub-block j's levels (low / high nibbles of rows 8 + 16j + e are
// inputs 32j + e / 32j + 16 + e) as level ^ 0x80, input groups 8j + g and 8j + 4 + g; the tile
// takes 128 x the activations' sum out of each sub-block sum.
void codes_iq4_xs(const uint8_t* blk, KCodes* k) {
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i m0f = _mm512_set1_epi8(0x0f);
  const __m512i table = iq4_table_flipped();
  iq4_xs_scales(blk, k->sc);
  store_f16_scales(blk, ph, k->d);
  for (int j = 0; j < 8; ++j) {
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      prefetch_part<kToL1>(blk + 32 * 136, 32 * 136, 32, 4 * j + g);
      const uint8_t* q = blk + (8 + 16 * j + 4 * g) * 32;  // a quad
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        const __m512i t = _mm512_loadu_si512(q + 64 * c);
        _mm512_store_si512(k->q[8 * j + g][c],
                           _mm512_shuffle_epi8(table, _mm512_and_si512(t, m0f)));
        _mm512_store_si512(
            k->q[8 * j + 4 + g][c],
            _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(t, 4), m0f)));
      }
    }
  }
}

// R rows x one k block of KCodes: per sub-block j of kSub inputs the exact sum of code x a,
// minus kOff x the activations' sum over it, times the scale, into S (and the min times the
// activations' sum into Mn); then the float steps, acc from y (or +0.0f at the first k block).
template <int R, int kSub, int kOff, bool kMins>
void kcodes_tile(const KCodes& k, const uint8_t* xrow, int64_t ldq, int64_t xd_off, int64_t xs_off,
                 int64_t kb, float* y, int64_t ldy, bool first, int64_t n_cols) {
  constexpr int kGroups = kSub / 4;
#pragma GCC unroll 2
  for (int c = 0; c < 2; ++c) {
    const __mmask16 mask = lane_mask(n_cols - 16 * c);
    if (mask == 0) continue;
    __m512i S[R], Mn[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r] = Mn[r] = _mm512_setzero_si512();
    for (int j = 0; j < 256 / kSub; ++j) {
      __m512i is[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) is[r] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int gg = 0; gg < kGroups; ++gg) {
        const int grp = j * kGroups + gg;
        const __m512i w = _mm512_load_si512(k.q[grp][c]);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          is[r] = _mm512_dpbusd_epi32(
              is[r], w, _mm512_set1_epi32(load_i32(xrow + r * ldq + kb * 256 + 4 * grp)));
      }
      const __m512i scj = _mm512_load_si512(k.sc[j] + 16 * c);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int32_t* s16 = reinterpret_cast<const int32_t*>(xrow + r * ldq + xs_off) + kb * 16;
        const int32_t s = kSub == 16 ? s16[j] : s16[2 * j] + s16[2 * j + 1];
        const __m512i v = kOff == 0 ? is[r] : _mm512_sub_epi32(is[r], _mm512_set1_epi32(kOff * s));
        S[r] = _mm512_add_epi32(S[r], _mm512_mullo_epi32(v, scj));
        if (kMins)
          Mn[r] = _mm512_add_epi32(
              Mn[r], _mm512_mullo_epi32(_mm512_load_si512(k.mn[j] + 16 * c), _mm512_set1_epi32(s)));
      }
    }
    const __m512 d = _mm512_load_ps(k.d + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
      float* out = y + r * ldy + 16 * c;
      __m512 acc = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, out);
      acc = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, S[r]), _mm512_mul_ps(d, dx), acc);
      if (kMins)
        acc = _mm512_fnmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, Mn[r]),
                               _mm512_mul_ps(_mm512_load_ps(k.dmin + 16 * c), dx), acc);
      _mm512_mask_storeu_ps(out, mask, acc);
    }
  }
}

using KCodesTile = void (*)(const KCodes&, const uint8_t*, int64_t, int64_t, int64_t, int64_t,
                            float*, int64_t, bool, int64_t);

template <int kSub, int kOff, bool kMins>
KCodesTile pick_kcodes(int64_t rows) {
  // clang-format off
  switch (rows) {
    case 1: return &kcodes_tile<1, kSub, kOff, kMins>;
    case 2: return &kcodes_tile<2, kSub, kOff, kMins>;
    case 3: return &kcodes_tile<3, kSub, kOff, kMins>;
    default: return &kcodes_tile<4, kSub, kOff, kMins>;
  }
  // clang-format on
}

// Panels outer, k blocks next: each k block's codes assembled once, then row tiles of up to 4.
template <int64_t kBlockBytes, void (*kFill)(const uint8_t*, KCodes*), int kSub, int kOff,
          bool kMins>
void k256_codes_block(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 256, pstride = nbt * 32 * kBlockBytes;
  KCodes k;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t kb = 0; kb < nbt; ++kb) {
      kFill(panels + p * pstride + kb * 32 * kBlockBytes, &k);
      for (int64_t m = b.m0; m < b.m1; m += 4) {
        pick_kcodes<kSub, kOff, kMins>(b.m1 - m)(k, job.xq + m * job.ldq, job.ldq, job.xd_off,
                                                 job.xs_off, kb, job.y + m * job.ldy + p * 32,
                                                 job.ldy, kb == 0, job.N - p * 32);
      }
    }
  }
}

}  // namespace

void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  const bool prefill = b.m1 - b.m0 >= kCodesMinRows;
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return q8_0_block(job, b);
    case core::DType::kQ4_K:
      if (prefill) return k256_codes_block<144, &codes_q4_k<false>, 32, 0, true>(job, b);
      return k256_block<144, &q4_k_tile<1, false>, &q4_k_tile<2, false>>(job, b);
    case core::DType::kQ5_K:
      if (prefill) return k256_codes_block<176, &codes_q4_k<true>, 32, 0, true>(job, b);
      return k256_block<176, &q4_k_tile<1, true>, &q4_k_tile<2, true>>(job, b);
    case core::DType::kIQ4_XS:
      if (prefill) return k256_codes_block<136, &codes_iq4_xs, 32, 128, false>(job, b);
      return k256_block<136, &iq4_xs_tile<1>, &iq4_xs_tile<2>>(job, b);
    case core::DType::kQ6_K:
      if (prefill) return k256_codes_block<210, &codes_q6_k, 16, 32, false>(job, b);
      return k256_block<210, &q6_k_tile<1>, &q6_k_tile<2>>(job, b);
    case core::DType::kQ4_0:
      return q4_32_block<int(core::DType::kQ4_0)>(job, b);
    case core::DType::kIQ4_NL:
      return q4_32_block<int(core::DType::kIQ4_NL)>(job, b);
    case core::DType::kQ5_0:
      return q4_32_block<int(core::DType::kQ5_0)>(job, b);
    case core::DType::kQ4_1:
      return q4_32_block<int(core::DType::kQ4_1)>(job, b);
    case core::DType::kQ5_1:
      return q4_32_block<int(core::DType::kQ5_1)>(job, b);
    case core::DType::kQ3_K:
      if (prefill) return k256_codes_block<110, &codes_q3_q2_k<true>, 16, 4, false>(job, b);
      return k256_block<110, &q3_q2_k_tile<1, true>, &q3_q2_k_tile<2, true>>(job, b);
    case core::DType::kQ2_K:
      if (prefill) return k256_codes_block<84, &codes_q3_q2_k<false>, 16, 0, true>(job, b);
      return k256_block<84, &q3_q2_k_tile<1, false>, &q3_q2_k_tile<2, false>>(job, b);
    default:  // the AVX2 kernels give the same bits
      return isa_avx2::gemm_int8_block(dtype, job, b);
  }
}

}  // namespace anchorage::kernels::isa_vnni

// The GEMM block kernel for AVX-512 (contract: kernels/gemm.h; blocking: kernels/gemm_job.h,
// kernels/gemm_block_impl.h).
//
// Register tile: R rows x P panels (32 columns each = two zmm), 2*R*P accumulators. Each
// accumulator lane is one output element's chain: _mm512_fmadd_ps over k ascending, from +0.0f
// or from the exact partial sum the previous K block stored in y. That is the scalar
// std::fma chain of gemm_scalar.cc bit for bit, whatever R, P or the blocking are.
// Everything is in an anonymous namespace and uses no std:: templates (see gemm_job.h).
#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/gemm_job.h"

namespace anchorage::kernels::isa_avx512 {
namespace {

// Main tile: 8 rows x 32 columns = 16 zmm accumulators, twice the chains the FMA latency (4)
// x pipes (2) need. 12 and 14 rows were measured too: no faster (docs/kernels.md).
constexpr int kMr = 8;

inline __mmask16 lane_mask(int64_t n) {
  if (n >= 16) return __mmask16(0xffff);
  if (n <= 0) return __mmask16(0);
  return __mmask16((1u << n) - 1u);
}

inline __m512 load_w(const float* w) {
  return _mm512_load_ps(w);
}
// bf16 -> f32 is exact (the bf16 bits become the high half). Widening in registers as the
// panel is loaded measured faster than widening into a f32 copy once per block, at every M
// (the converts run beside the FMAs, and the bf16 block is half the L2 traffic). The maskz
// forms only avoid a GCC 12 -Wmaybe-uninitialized false positive in the plain ones.
inline __m512 load_w(const uint16_t* w) {
  const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
  const __m512i u = _mm512_maskz_cvtepu16_epi32(__mmask16(0xffff), h);
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(__mmask16(0xffff), u, 16));
}

// y[0, R) x the columns of panels [0, P) (see gemm_block_impl.h for the arguments).
template <int R, int P, typename T>
void tile(const float* x, int64_t ldx, const T* w, int64_t wstride, int64_t kc, float* y,
          int64_t ldy, bool first, int64_t n_cols) {
  __mmask16 mask[2 * P];
#pragma GCC unroll 16
  for (int j = 0; j < 2 * P; ++j) mask[j] = lane_mask(n_cols - 16 * j);
  __m512 acc[R][2 * P];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) {
      acc[r][j] =
          first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask[j], y + r * ldy + 16 * j);
    }
  }
  // Per k: R broadcasts, then one panel's two weight vectors at a time, so the live registers
  // are 2*R*P accumulators + R broadcasts + 2 weights (<= 26 of 32 for every tile picked).
  for (int64_t k = 0; k < kc; ++k) {
    __m512 xb[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) xb[r] = _mm512_set1_ps(x[r * ldx + k]);
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      const __m512 w0 = load_w(w + q * wstride + k * 32);
      const __m512 w1 = load_w(w + q * wstride + k * 32 + 16);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        acc[r][2 * q] = _mm512_fmadd_ps(xb[r], w0, acc[r][2 * q]);
        acc[r][2 * q + 1] = _mm512_fmadd_ps(xb[r], w1, acc[r][2 * q + 1]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) {
      _mm512_mask_storeu_ps(y + r * ldy + 16 * j, mask[j], acc[r][j]);
    }
  }
}

template <typename T>
using TileFn = void (*)(const float*, int64_t, const T*, int64_t, int64_t, float*, int64_t, bool,
                        int64_t);

// Panels per tile (a power of two): a single row (decode) streams 8 panels at once, 16 chains and
// 16 loads of a k step in flight; smaller tiles take enough panels for >= 16 accumulators.
constexpr int panels_for_rows(int r) {
  return r == 1 ? 8 : r == 2 ? 4 : r <= 4 ? 2 : 1;
}

// The tile of R rows x exactly p panels (p a power of two up to panels_for_rows(R)).
template <typename T, int R, int P = panels_for_rows(R)>
TileFn<T> pick_p(int p) {
  if constexpr (P == 1) {
    return &tile<R, 1, T>;
  } else {
    return p == P ? &tile<R, P, T> : pick_p<T, R, P / 2>(p);
  }
}

template <typename T>
TileFn<T> pick(int r, int p) {
  // clang-format off
  switch (r) {
    case 1: return pick_p<T, 1>(p);
    case 2: return pick_p<T, 2>(p);
    case 3: return pick_p<T, 3>(p);
    case 4: return pick_p<T, 4>(p);
    case 5: return pick_p<T, 5>(p);
    case 6: return pick_p<T, 6>(p);
    case 7: return pick_p<T, 7>(p);
    default: return pick_p<T, 8>(p);
  }
  // clang-format on
}

#include "kernels/gemm_block_impl.h"
#include "kernels/unpack_impl.h"

// f16 -> f32 eight at a time with F16C (exact, subnormals included); a NaN keeps its payload
// unquieted, as core::f16_to_f32 does (vcvtph2ps would set the quiet bit).
void unpack_f16_impl(const uint16_t* src, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i mag = _mm256_and_si256(w, _mm256_set1_epi32(0x7fff));
    const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7c00));
    const __m256i raw = _mm256_or_si256(
        _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16),
        _mm256_or_si256(_mm256_set1_epi32(0x7f800000),
                        _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3ff)), 13)));
    _mm256_storeu_ps(out + i,
                     _mm256_blendv_ps(f, _mm256_castsi256_ps(raw), _mm256_castsi256_ps(nan)));
  }
  for (; i < n; ++i) out[i] = core::f16_to_f32(src[i]);
}

// Q8_0 panels multiplied without unpacking (few rows: decode and verify). Per k block of 32
// inputs the tile loads the 32 lanes' scales d (half_to_float, as the unpacker does) and per
// input one 32-byte run of quants, widened in registers: w = float(q) * d, the value
// dequantize_row() gives, then the same FMA chain over k ascending from +0.0f. So the bits
// equal the unpacking path's and every other ISA's.
// 16 int8 -> f32, exact. (The maskz forms only avoid GCC 12's -Wmaybe-uninitialized false
// positive in the plain ones, as in load_w.)
inline __m512 widen_q8(__m128i q) {
  const __mmask16 all = __mmask16(0xffff);
  return _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, q));
}
// 16 uint8 (nibbles) -> f32, exact.
inline __m512 widen_u4(__m128i q) {
  const __mmask16 all = __mmask16(0xffff);
  return _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepu8_epi32(all, q));
}

template <int R, int P>
void q8_0_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
               int64_t ldy, int64_t n_cols) {
  __mmask16 mask[2 * P];
#pragma GCC unroll 16
  for (int j = 0; j < 2 * P; ++j) mask[j] = lane_mask(n_cols - 16 * j);
  __m512 acc[R][2 * P];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  for (int64_t kb = 0; kb < K / 32; ++kb) {
    __m512 d[2 * P];
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      alignas(64) float ds[32];
      unpack_f16_field(w + q * pstride + kb * 32 * 34, 0, ds);
      d[2 * q] = _mm512_load_ps(ds);
      d[2 * q + 1] = _mm512_load_ps(ds + 16);
    }
    const float* xk = x + kb * 32;
    for (int i = 0; i < 32; ++i) {
      __m512 xb[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) xb[r] = _mm512_set1_ps(xk[r * ldx + i]);
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q) {
        const uint8_t* qs = w + q * pstride + kb * 32 * 34 + (2 + i) * 32;
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
        const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16));
        const __m512 w0 = _mm512_mul_ps(widen_q8(q0), d[2 * q]);
        const __m512 w1 = _mm512_mul_ps(widen_q8(q1), d[2 * q + 1]);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
          acc[r][2 * q] = _mm512_fmadd_ps(xb[r], w0, acc[r][2 * q]);
          acc[r][2 * q + 1] = _mm512_fmadd_ps(xb[r], w1, acc[r][2 * q + 1]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) _mm512_mask_storeu_ps(y + r * ldy + 16 * j, mask[j], acc[r][j]);
  }
}

using Q8TileFn = void (*)(const float*, int64_t, const uint8_t*, int64_t, int64_t, float*, int64_t,
                          int64_t);

// Panels per Q8_0 tile: accumulators + scales + the two weights + broadcasts within 32 zmm.
constexpr int q8_panels_for_rows(int r) {
  return r <= 2 ? 4 : r <= 4 ? 2 : 1;
}

template <int R, int P = q8_panels_for_rows(R)>
Q8TileFn q8_pick_p(int p) {
  if constexpr (P == 1) {
    return &q8_0_tile<R, 1>;
  } else {
    return p == P ? &q8_0_tile<R, P> : q8_pick_p<R, P / 2>(p);
  }
}

Q8TileFn q8_pick(int r, int p) {
  // clang-format off
  switch (r) {
    case 1: return q8_pick_p<1>(p);
    case 2: return q8_pick_p<2>(p);
    case 3: return q8_pick_p<3>(p);
    case 4: return q8_pick_p<4>(p);
    case 5: return q8_pick_p<5>(p);
    case 6: return q8_pick_p<6>(p);
    case 7: return q8_pick_p<7>(p);
    default: return q8_pick_p<8>(p);
  }
  // clang-format on
}

// Q4_K panels multiplied without unpacking (few rows), like q8_0_tile: per sub-block of 32
// inputs the lanes' (d*sc) and (dmin*m) (q4_k_lane_scales, as the unpacker computes them), per
// input one 32-byte run of quants whose low or high nibbles are widened in registers:
// w = (d*sc) * q - dmin*m, a product then a difference (never fused), dequantize_row()'s value.
template <int R, int P>
void q4_k_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
               int64_t ldy, int64_t n_cols) {
  __mmask16 mask[2 * P];
#pragma GCC unroll 16
  for (int j = 0; j < 2 * P; ++j) mask[j] = lane_mask(n_cols - 16 * j);
  __m512 acc[R][2 * P];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  const __m128i low4 = _mm_set1_epi8(0x0F);
  for (int64_t kb = 0; kb < K / 256; ++kb) {
    alignas(64) float d1[P][8][32];
    alignas(64) float m1[P][8][32];
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) q4_k_lane_scales(w + q * pstride + kb * 32 * 144, d1[q], m1[q]);
    for (int j = 0; j < 8; ++j) {
      __m512 dv[2 * P], mv[2 * P];
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q) {
        dv[2 * q] = _mm512_load_ps(d1[q][j]);
        dv[2 * q + 1] = _mm512_load_ps(d1[q][j] + 16);
        mv[2 * q] = _mm512_load_ps(m1[q][j]);
        mv[2 * q + 1] = _mm512_load_ps(m1[q][j] + 16);
      }
      const int shift = (j % 2) * 4;  // sub-block 2i: low nibbles, 2i+1: high
      const float* xk = x + kb * 256 + 32 * j;
      for (int l = 0; l < 32; ++l) {
        __m512 xb[R];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) xb[r] = _mm512_set1_ps(xk[r * ldx + l]);
#pragma GCC unroll 16
        for (int q = 0; q < P; ++q) {
          const uint8_t* qs = w + q * pstride + kb * 32 * 144 + (16 + 32 * (j / 2) + l) * 32;
          const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
          const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16));
          const __m128i n0 = _mm_and_si128(_mm_srli_epi16(b0, shift), low4);
          const __m128i n1 = _mm_and_si128(_mm_srli_epi16(b1, shift), low4);
          const __m512 w0 = _mm512_sub_ps(_mm512_mul_ps(dv[2 * q], widen_u4(n0)), mv[2 * q]);
          const __m512 w1 =
              _mm512_sub_ps(_mm512_mul_ps(dv[2 * q + 1], widen_u4(n1)), mv[2 * q + 1]);
#pragma GCC unroll 16
          for (int r = 0; r < R; ++r) {
            acc[r][2 * q] = _mm512_fmadd_ps(xb[r], w0, acc[r][2 * q]);
            acc[r][2 * q + 1] = _mm512_fmadd_ps(xb[r], w1, acc[r][2 * q + 1]);
          }
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 2 * P; ++j) _mm512_mask_storeu_ps(y + r * ldy + 16 * j, mask[j], acc[r][j]);
  }
}

// Panels per Q4_K tile: 2P accumulators per row + 4P scale vectors + broadcasts <= 32 zmm.
constexpr int q4_panels_for_rows(int r) {
  return r == 1 ? 4 : r <= 4 ? 2 : 1;
}

template <int R, int P = q4_panels_for_rows(R)>
Q8TileFn q4_pick_p(int p) {
  if constexpr (P == 1) {
    return &q4_k_tile<R, 1>;
  } else {
    return p == P ? &q4_k_tile<R, P> : q4_pick_p<R, P / 2>(p);
  }
}

Q8TileFn q4_pick(int r, int p) {
  // clang-format off
  switch (r) {
    case 1: return q4_pick_p<1>(p);
    case 2: return q4_pick_p<2>(p);
    case 3: return q4_pick_p<3>(p);
    case 4: return q4_pick_p<4>(p);
    case 5: return q4_pick_p<5>(p);
    case 6: return q4_pick_p<6>(p);
    case 7: return q4_pick_p<7>(p);
    default: return q4_pick_p<8>(p);
  }
  // clang-format on
}

}  // namespace

void gemm_q8_0_block(const GemmJob& job, const GemmBlock& b) {
  const int rows = int(b.m1 - b.m0);
  const int pg = q8_panels_for_rows(rows);
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t pstride = job.K * 34;  // bytes of one Q8_0 panel: K/32 k blocks of 32 x 34
  for (int64_t p = b.p0; p < b.p1;) {
    int np = pg;
    while (np > b.p1 - p) np /= 2;
    q8_pick(rows, np)(job.x + b.m0 * job.ldx, job.ldx, panels + p * pstride, pstride, job.K,
                      job.y + b.m0 * job.ldy + p * 32, job.ldy, job.N - p * 32);
    p += np;
  }
}

void gemm_q4_k_block(const GemmJob& job, const GemmBlock& b) {
  const int rows = int(b.m1 - b.m0);
  const int pg = q4_panels_for_rows(rows);
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t pstride = job.K / 256 * 32 * 144;  // bytes of one Q4_K panel
  for (int64_t p = b.p0; p < b.p1;) {
    int np = pg;
    while (np > b.p1 - p) np /= 2;
    q4_pick(rows, np)(job.x + b.m0 * job.ldx, job.ldx, panels + p * pstride, pstride, job.K,
                      job.y + b.m0 * job.ldy + p * 32, job.ldy, job.N - p * 32);
    p += np;
  }
}

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  gemm_block_impl(job, b);
}

void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  unpack_kblocks_impl(dtype, blocks, n, out);
}

void unpack_f16(const uint16_t* src, int64_t n, float* out) {
  unpack_f16_impl(src, n, out);
}

}  // namespace anchorage::kernels::isa_avx512

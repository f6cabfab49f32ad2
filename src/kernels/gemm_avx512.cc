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
#include "kernels/panel_layout.h"
#include "kernels/q3_k_codes.h"
#include "kernels/simd/force_inline.h"

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

// Vector operations of the in-register decode kernels (gemm_decode_impl.h): 16 lanes.
// (The maskz forms of the conversions only avoid GCC 12's -Wmaybe-uninitialized false positive in
// the plain ones, as in load_w.)
struct DV {
  static constexpr int kW = 16;
  static constexpr __mmask16 kAll = 0xffff;
  using F = __m512;
  using I = __m512i;
  static F zero() { return _mm512_setzero_ps(); }
  static F bcast(const float* p) { return _mm512_set1_ps(*p); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fmsub(F a, F b, F c) { return _mm512_fmsub_ps(a, b, c); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F cvt(I a) { return _mm512_maskz_cvtepi32_ps(kAll, a); }
  // 16 bytes zero- / sign-extended to 32-bit lanes.
  static I u8(const uint8_t* p) {
    return _mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I i8(const uint8_t* p) {
    return _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // kW 32-bit lanes (a panel's quads: kernels/panel_layout.h).
  static I u32(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static I srl(I a, int n) { return _mm512_maskz_srli_epi32(kAll, a, unsigned(n)); }
  // Byte t of each 32-bit lane as int32, sign-extended.
  static I byte_i8(I a, int t) {
    return _mm512_maskz_srai_epi32(kAll, _mm512_maskz_slli_epi32(kAll, a, unsigned(24 - 8 * t)),
                                   24);
  }
  static I and_(I a, int m) { return _mm512_and_si512(a, _mm512_set1_epi32(m)); }
  static I and15(I a) { return and_(a, 15); }
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I srl4(I a) { return _mm512_maskz_srli_epi32(kAll, a, 4); }
  static I srl6(I a) { return _mm512_maskz_srli_epi32(kAll, a, 6); }
  static I sll4(I a) { return _mm512_maskz_slli_epi32(kAll, a, 4); }
  // 16 f16 -> f32 (exact; see gemm_decode_impl.h for signalling NaNs). Two 256-bit
  // conversions measured faster here than one 512-bit vcvtph2ps (M = 1, K 512, N 2048: 55 vs
  // 61 us a call; the LM head is bandwidth-bound either way).
  static F f16(const uint8_t* p) {
    const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  }
  // Lanes [16j, 16j + 16) of 32 gathered halves (gather_halves).
  static F halves(const __m256i h[2], int j) { return _mm512_maskz_cvtph_ps(kAll, h[j]); }
  // The first n (<= 16) lanes.
  static void store(float* y, F v, int64_t n) { _mm512_mask_storeu_ps(y, lane_mask(n), v); }
};

// Rows of one decode register tile, and panels per tile: accumulators (2 per row and panel) +
// broadcasts + the dequantizing temporaries within 32 zmm, and >= 8 chains to cover the FMA
// latency. f16 streams as many panels as f32 (its conversion is one instruction).
constexpr int kDecodeMr = 8;
constexpr int decode_panels(int dtype, int r) {
  return dtype == int(core::DType::kF16) ? (r == 1   ? 8
                                            : r == 2 ? 4
                                            : r <= 4 ? 2
                                                     : 1)
                                         : (r == 1   ? 4
                                            : r <= 4 ? 2
                                                     : 1);
}

#include "kernels/gemm_decode_impl.h"

}  // namespace

void gemm_decode_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  gemm_decode_block_impl(dtype, job, b);
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

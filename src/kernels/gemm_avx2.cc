// The GEMM block kernel for AVX2 + FMA (contract: kernels/gemm.h; blocking: kernels/gemm_job.h,
// kernels/gemm_block_impl.h).
//
// gemm_avx512.cc with 8-lane vectors: a panel's 32 columns are four ymm. Register tile: R rows
// x P panels, 4*R*P accumulators, each lane one output element's chain (_mm256_fmadd_ps, k
// ascending, from +0.0f or the exact partial sum in y), so the bits equal the other ISAs'.
// Anonymous namespace, no std:: templates (see gemm_job.h).
#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/gemm_job.h"
#include "kernels/panel_layout.h"
#include "kernels/q3_k_codes.h"
#include "kernels/simd/force_inline.h"

namespace anchorage::kernels::isa_avx2 {
namespace {

// 3 rows x 32 columns = 12 accumulators + 3 broadcasts + 1 weight vector: all 16 ymm.
constexpr int kMr = 3;

inline __m256i lane_mask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n < 0 ? 0 : n > 8 ? 8 : n)), idx);
}

inline __m256 load_w(const float* w) {
  return _mm256_load_ps(w);
}
// bf16 -> f32 is exact (the bf16 bits become the high half), widened as loaded: it reuses the
// weight register, and a widened f32 copy measured no faster.
inline __m256 load_w(const uint16_t* w) {
  const __m128i h = _mm_load_si128(reinterpret_cast<const __m128i*>(w));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// y[0, R) x the columns of panels [0, P) (see gemm_block_impl.h for the arguments). The
// weight vector is the inner operand so one register serves all R rows.
template <int R, int P, typename T>
void tile(const float* x, int64_t ldx, const T* w, int64_t wstride, int64_t kc, float* y,
          int64_t ldy, bool first, int64_t n_cols) {
  __m256i mask[4 * P];
#pragma GCC unroll 16
  for (int j = 0; j < 4 * P; ++j) mask[j] = lane_mask(n_cols - 8 * j);
  __m256 acc[R][4 * P];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 4 * P; ++j) {
      acc[r][j] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + r * ldy + 8 * j, mask[j]);
    }
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m256 xb[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) xb[r] = _mm256_broadcast_ss(x + r * ldx + k);
#pragma GCC unroll 16
    for (int j = 0; j < 4 * P; ++j) {
      const __m256 wv = load_w(w + (j / 4) * wstride + k * 32 + (j % 4) * 8);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][j] = _mm256_fmadd_ps(xb[r], wv, acc[r][j]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < 4 * P; ++j) _mm256_maskstore_ps(y + r * ldy + 8 * j, mask[j], acc[r][j]);
  }
}

template <typename T>
using TileFn = void (*)(const float*, int64_t, const T*, int64_t, int64_t, float*, int64_t, bool,
                        int64_t);

// A single row (decode) runs 3 panels at once: 12 chains.
constexpr int panels_for_rows(int r) {
  return r == 1 ? 3 : 1;
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
    default: return pick_p<T, 3>(p);
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

// Vector operations of the in-register decode kernels (gemm_decode_impl.h): 8 lanes.
struct DV {
  static constexpr int kW = 8;
  using F = __m256;
  using I = __m256i;
  static F zero() { return _mm256_setzero_ps(); }
  static F bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fmsub(F a, F b, F c) { return _mm256_fmsub_ps(a, b, c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F cvt(I a) { return _mm256_cvtepi32_ps(a); }
  // 8 bytes zero- / sign-extended to 32-bit lanes.
  static I u8(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I i8(const uint8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // kW 32-bit lanes (a panel's quads: kernels/panel_layout.h).
  static I u32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static I srl(I a, int n) { return _mm256_srli_epi32(a, n); }
  // Byte t of each 32-bit lane as int32, sign-extended.
  static I byte_i8(I a, int t) { return _mm256_srai_epi32(_mm256_slli_epi32(a, 24 - 8 * t), 24); }
  static I and_(I a, int m) { return _mm256_and_si256(a, _mm256_set1_epi32(m)); }
  static I and15(I a) { return and_(a, 15); }
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  static I srl4(I a) { return _mm256_srli_epi32(a, 4); }
  static I srl6(I a) { return _mm256_srli_epi32(a, 6); }
  static I sll4(I a) { return _mm256_slli_epi32(a, 4); }
  // 8 f16 -> f32 (exact; see gemm_decode_impl.h for signalling NaNs).
  static F f16(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // Lanes [8j, 8j + 8) of 32 gathered halves (gather_halves).
  static F halves(const __m256i h[2], int j) {
    const __m256i v = h[j / 2];
    return _mm256_cvtph_ps(j % 2 == 0 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1));
  }
  // The first n lanes (all 8 when n >= 8).
  static void store(float* y, F v, int64_t n) {
    if (n >= 8) {
      _mm256_storeu_ps(y, v);
    } else if (n > 0) {
      _mm256_maskstore_ps(y, lane_mask(n), v);
    }
  }
};

// Decode tiles: at most 2 rows (4 accumulators per row and panel in 16 ymm), one row takes 2
// panels: 8 chains, the FMA latency x 2 pipes.
constexpr int kDecodeMr = 2;
constexpr int decode_panels(int dtype, int r) {
  return r == 1 ? 2 : 1;
}

#include "kernels/gemm_decode_impl.h"

}  // namespace

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  gemm_block_impl(job, b);
}

void gemm_decode_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  gemm_decode_block_impl(dtype, job, b);
}

void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  unpack_kblocks_impl(dtype, blocks, n, out);
}

void unpack_f16(const uint16_t* src, int64_t n, float* out) {
  unpack_f16_impl(src, n, out);
}

}  // namespace anchorage::kernels::isa_avx2

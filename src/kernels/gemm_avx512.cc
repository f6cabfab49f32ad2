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

}  // namespace

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  gemm_block_impl(job, b);
}

}  // namespace anchorage::kernels::isa_avx512

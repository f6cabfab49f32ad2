// The activation quantizer for AVX-512 (quant_act_impl.h has the operations, quantize_row_any
// the reference): 16 inputs a vector. The same operations as the reference, element by element,
// so the same bytes: the max on |x|'s bits (exact in any order), the scale and its inverse as
// scalars, x · id (one rounding), NaN to +0, the clamp to ±127 (max / min: no NaN left, and
// ±127 never ties with a ±0), and the rounding to nearest even by vcvtps2dq in the default
// rounding mode (the reference's add and subtract of 1.5 · 2^23 rounds |v| <= 127 the same
// way). The sums are exact integer adds.
// GCC 12's AVX-512 headers self-initialise their "undefined" vectors (GCC PR105593): without the
// pragma every inlined intrinsic warns -Wmaybe-uninitialized (as kernels/simd/v16_avx512.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "core/check.h"
#include "kernels/quant_act_impl.h"

namespace anchorage::kernels::quant_detail {

namespace {

// The quants of 16 inputs as int32, with id the block's inverse scale.
inline __m512i quant16(const float* x, __m512 id) {
  __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x), id);
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
  return _mm512_cvtps_epi32(v);
}

}  // namespace

void quantize_row_avx512(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                         float* d, int32_t* s) {
  ANCHORAGE_CHECK(block % 32 == 0 && (sum_block == 16 || sum_block == 32));
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  for (int64_t b = 0; b < K / block; ++b) {
    const float* xb = x + b * block;
    __m512i mx = _mm512_setzero_si512();
    for (int64_t i = 0; i < block; i += 16)
      mx = _mm512_max_epu32(mx, _mm512_and_si512(_mm512_loadu_si512(xb + i), abs_mask));
    float idb;
    d[b] = block_scale(uint32_t(_mm512_reduce_max_epu32(mx)), &idb);
    const __m512 id = _mm512_set1_ps(idb);
    int8_t* qb = q + b * block;
    int32_t* sb = s + b * block / sum_block;
    for (int64_t i = 0; i < block; i += 32) {
      const __m512i lo = quant16(xb + i, id), hi = quant16(xb + i + 16, id);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qb + i), _mm512_cvtepi32_epi8(lo));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qb + i + 16), _mm512_cvtepi32_epi8(hi));
      if (sum_block == 16) {
        sb[i / 16] = _mm512_reduce_add_epi32(lo);
        sb[i / 16 + 1] = _mm512_reduce_add_epi32(hi);
      } else {
        sb[i / 32] = _mm512_reduce_add_epi32(_mm512_add_epi32(lo, hi));
      }
    }
  }
}

}  // namespace anchorage::kernels::quant_detail

// The activation quantizer for AVX2 (quant_act_impl.h has the operations, quantize_row_any the
// reference): 8 inputs a vector, the same operations as quant_act_avx512.cc (whose comment says
// why each gives the reference's bytes).
#include <immintrin.h>

#include "core/check.h"
#include "kernels/quant_act_impl.h"

namespace anchorage::kernels::quant_detail {

namespace {

// The quants of 8 inputs as int32, with id the block's inverse scale.
inline __m256i quant8(const float* x, __m256 id) {
  __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x), id);
  v = _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_ORD_Q), v);
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(v);
}

inline int32_t sum8(__m256i v) {
  __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(x);
}

}  // namespace

void quantize_row_avx2(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                       float* d, int32_t* s) {
  ANCHORAGE_CHECK(block % 32 == 0 && (sum_block == 16 || sum_block == 32));
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  for (int64_t b = 0; b < K / block; ++b) {
    const float* xb = x + b * block;
    __m256i mx = _mm256_setzero_si256();
    for (int64_t i = 0; i < block; i += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + i));
      mx = _mm256_max_epu32(mx, _mm256_and_si256(v, abs_mask));
    }
    __m128i m4 = _mm_max_epu32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
    m4 = _mm_max_epu32(m4, _mm_shuffle_epi32(m4, _MM_SHUFFLE(1, 0, 3, 2)));
    m4 = _mm_max_epu32(m4, _mm_shuffle_epi32(m4, _MM_SHUFFLE(2, 3, 0, 1)));
    float idb;
    d[b] = block_scale(uint32_t(_mm_cvtsi128_si32(m4)), &idb);
    const __m256 id = _mm256_set1_ps(idb);
    int8_t* qb = q + b * block;
    int32_t* sb = s + b * block / sum_block;
    // The 8-lane packs interleave their two 128-bit halves; this permute puts the 32 bytes
    // back in input order.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t i = 0; i < block; i += 32) {
      const __m256i a = quant8(xb + i, id), b8 = quant8(xb + i + 8, id);
      const __m256i c = quant8(xb + i + 16, id), e = quant8(xb + i + 24, id);
      const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b8), _mm256_packs_epi32(c, e));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb + i),
                          _mm256_permutevar8x32_epi32(bytes, order));
      if (sum_block == 16) {
        sb[i / 16] = sum8(_mm256_add_epi32(a, b8));
        sb[i / 16 + 1] = sum8(_mm256_add_epi32(c, e));
      } else {
        sb[i / 32] = sum8(_mm256_add_epi32(_mm256_add_epi32(a, b8), _mm256_add_epi32(c, e)));
      }
    }
  }
}

}  // namespace anchorage::kernels::quant_detail

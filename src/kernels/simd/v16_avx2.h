// V16, AVX2 backend: two __m256 (lanes 0-7 and 8-15).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace anchorage::kernels::isa_avx2 {

struct V16 {
  __m256 a, b;

  static __m256i mask8(int n) {
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
  }
  static __m256 widen8(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }

  static V16 zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static V16 bcast(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
  static V16 load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static V16 load_partial(const float* p, int n) {
    int n1 = n > 8 ? 8 : n, n2 = n > 8 ? n - 8 : 0;
    return {_mm256_maskload_ps(p, mask8(n1)), _mm256_maskload_ps(p + 8, mask8(n2))};
  }
  static V16 load_bf16(const uint16_t* p) {
    return {widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  static V16 load_bf16_partial(const uint16_t* p, int n) {
    alignas(32) uint16_t t[16] = {};
    for (int i = 0; i < n; ++i) t[i] = p[i];
    return load_bf16(t);
  }
  // 32 bf16 as two V16 in the pair order of this ISA: of elements 0-15, lo.a holds the even
  // ones and lo.b the odd ones; hi the same of 16-31. One shift and one and per 16, where
  // load_bf16 widens each 8 across lanes. Every element's value is load_bf16's; only its lane
  // differs, and store_pairs / load_pairs translate.
  static void load_bf16_pairs(const uint16_t* p, V16& lo, V16& hi) {
    const __m256i high = _mm256_set1_epi32(int(0xFFFF0000u));
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
    lo = {_mm256_castsi256_ps(_mm256_slli_epi32(x, 16)),
          _mm256_castsi256_ps(_mm256_and_si256(x, high))};
    hi = {_mm256_castsi256_ps(_mm256_slli_epi32(y, 16)),
          _mm256_castsi256_ps(_mm256_and_si256(y, high))};
  }
  // 32 floats in pair order stored in element order, and loaded from element order into it.
  static void store_pairs(V16 lo, V16 hi, float* p) {
    store_pair16(lo, p);
    store_pair16(hi, p + 16);
  }
  static void load_pairs(const float* p, V16& lo, V16& hi) {
    lo = load_pair16(p);
    hi = load_pair16(p + 16);
  }
  // 16 elements: x.a the even ones, x.b the odd ones.
  static void store_pair16(V16 x, float* p) {
    const __m256 l = _mm256_unpacklo_ps(x.a, x.b);  // 0 1 2 3 | 8 9 10 11
    const __m256 h = _mm256_unpackhi_ps(x.a, x.b);  // 4 5 6 7 | 12 13 14 15
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(l, h, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(l, h, 0x31));
  }
  static V16 load_pair16(const float* p) {
    const __m256 x = _mm256_loadu_ps(p), y = _mm256_loadu_ps(p + 8);
    // 0 2 8 10 | 4 6 12 14, then the middle 64-bit quarters swapped.
    const __m256 e = _mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 o = _mm256_shuffle_ps(x, y, _MM_SHUFFLE(3, 1, 3, 1));
    return {_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)),
            _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8))};
  }
  void store(float* p) const {
    _mm256_storeu_ps(p, a);
    _mm256_storeu_ps(p + 8, b);
  }
  void store_partial(float* p, int n) const {
    int n1 = n > 8 ? 8 : n, n2 = n > 8 ? n - 8 : 0;
    _mm256_maskstore_ps(p, mask8(n1), a);
    _mm256_maskstore_ps(p + 8, mask8(n2), b);
  }
  float lane(int i) const {
    alignas(32) float t[16];
    _mm256_store_ps(t, a);
    _mm256_store_ps(t + 8, b);
    return t[i];
  }

  friend V16 operator-(V16 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    return {_mm256_xor_ps(x.a, sign), _mm256_xor_ps(x.b, sign)};
  }
  friend V16 operator+(V16 x, V16 y) { return {_mm256_add_ps(x.a, y.a), _mm256_add_ps(x.b, y.b)}; }
  friend V16 operator-(V16 x, V16 y) { return {_mm256_sub_ps(x.a, y.a), _mm256_sub_ps(x.b, y.b)}; }
  friend V16 operator*(V16 x, V16 y) { return {_mm256_mul_ps(x.a, y.a), _mm256_mul_ps(x.b, y.b)}; }
  friend V16 operator/(V16 x, V16 y) { return {_mm256_div_ps(x.a, y.a), _mm256_div_ps(x.b, y.b)}; }
  static V16 fma(V16 x, V16 y, V16 z) {
    return {_mm256_fmadd_ps(x.a, y.a, z.a), _mm256_fmadd_ps(x.b, y.b, z.b)};
  }
  static __m256 max8(__m256 x, __m256 y) {
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, y, _CMP_GT_OQ));
  }
  static __m256 min8(__m256 x, __m256 y) {
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, y, _CMP_LT_OQ));
  }
  static V16 max(V16 x, V16 y) { return {max8(x.a, y.a), max8(x.b, y.b)}; }
  static V16 min(V16 x, V16 y) { return {min8(x.a, y.a), min8(x.b, y.b)}; }
  static V16 sqrt(V16 x) { return {_mm256_sqrt_ps(x.a), _mm256_sqrt_ps(x.b)}; }
  static V16 round(V16 x) {
    constexpr int kMode = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    return {_mm256_round_ps(x.a, kMode), _mm256_round_ps(x.b, kMode)};
  }
  static __m256 pow2i8(__m256 n) {
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  static V16 pow2i(V16 n) { return {pow2i8(n.a), pow2i8(n.b)}; }
  static V16 select_lt(V16 p, V16 q, V16 x, V16 y) {
    return {_mm256_blendv_ps(y.a, x.a, _mm256_cmp_ps(p.a, q.a, _CMP_LT_OQ)),
            _mm256_blendv_ps(y.b, x.b, _mm256_cmp_ps(p.b, q.b, _CMP_LT_OQ))};
  }
  float reduce_add() const {
    __m256 s8 = _mm256_add_ps(a, b);  // lanes l + (l+8)
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
    return _mm_cvtss_f32(s1);
  }
  float reduce_max() const {
    alignas(32) float t[16];
    store(t);
    float m = t[0];
    for (int i = 1; i < 16; ++i) m = t[i] > m ? t[i] : m;
    return m;
  }
};

}  // namespace anchorage::kernels::isa_avx2

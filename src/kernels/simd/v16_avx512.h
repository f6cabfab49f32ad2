// V16, AVX-512 backend: one __m512.
#pragma once

// GCC 12's AVX-512 headers self-initialise their "undefined" vectors (GCC PR105593), which
// floods -Wmaybe-uninitialized at every inlined intrinsic; the pragma covers those header lines.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

namespace anchorage::kernels::isa_avx512 {

struct V16 {
  __m512 v;

  static V16 zero() { return {_mm512_setzero_ps()}; }
  static V16 bcast(float x) { return {_mm512_set1_ps(x)}; }
  static V16 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static V16 load_partial(const float* p, int n) {
    return {_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1u), p)};
  }
  static V16 load_bf16(const uint16_t* p) {
    __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))};
  }
  static V16 load_bf16_partial(const uint16_t* p, int n) {
    __m256i h = _mm256_maskz_loadu_epi16(__mmask16((1u << n) - 1u), p);
    return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))};
  }
  // 32 bf16 as two V16 in the pair order of this ISA: lo lane i = element 2i, hi lane i =
  // element 2i + 1. One shift and one and, where load_bf16 twice widens across lanes (port 5
  // on Intel, the shuffle pipes on AMD: what bounded bf16 attention). Every element's value is
  // load_bf16's; only its lane differs, and store_pairs / load_pairs translate.
  static void load_bf16_pairs(const uint16_t* p, V16& lo, V16& hi) {
    const __m512i x = _mm512_loadu_si512(p);
    lo = {_mm512_castsi512_ps(_mm512_slli_epi32(x, 16))};
    hi = {_mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(int(0xFFFF0000u))))};
  }
  // 32 floats in pair order stored in element order, and loaded from element order into it.
  static void store_pairs(V16 lo, V16 hi, float* p) {
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second =
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(lo.v, first, hi.v));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(lo.v, second, hi.v));
  }
  static void load_pairs(const float* p, V16& lo, V16& hi) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd =
        _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
    lo = {_mm512_permutex2var_ps(a, even, b)};
    hi = {_mm512_permutex2var_ps(a, odd, b)};
  }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  void store_partial(float* p, int n) const {
    _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1u), v);
  }
  float lane(int i) const {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    return t[i];
  }

  friend V16 operator-(V16 a) {
    return {_mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(int32_t(0x80000000u))))};
  }
  friend V16 operator+(V16 a, V16 b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend V16 operator-(V16 a, V16 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend V16 operator*(V16 a, V16 b) { return {_mm512_mul_ps(a.v, b.v)}; }
  friend V16 operator/(V16 a, V16 b) { return {_mm512_div_ps(a.v, b.v)}; }
  static V16 fma(V16 a, V16 b, V16 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  // maxps semantics (second operand where the first is NaN or both are zero), as scalar a > b.
  static V16 max(V16 a, V16 b) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ), b.v, a.v)};
  }
  static V16 min(V16 a, V16 b) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), b.v, a.v)};
  }
  static V16 sqrt(V16 a) { return {_mm512_sqrt_ps(a.v)}; }
  static V16 round(V16 a) {
    return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
  }
  static V16 pow2i(V16 n) {
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n.v), _mm512_set1_epi32(127));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(e, 23))};
  }
  static V16 select_lt(V16 a, V16 b, V16 x, V16 y) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), y.v, x.v)};
  }
  float reduce_add() const {
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    __m256 s8 = _mm256_add_ps(lo, hi);  // lanes l + (l+8)
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
    return _mm_cvtss_f32(s1);
  }
  // The scalar backend's sequential order (not _mm512_reduce_max_ps, whose tree treats NaN
  // and signed zeros differently).
  float reduce_max() const {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    float m = t[0];
    for (int i = 1; i < 16; ++i) m = t[i] > m ? t[i] : m;
    return m;
  }
};

}  // namespace anchorage::kernels::isa_avx512

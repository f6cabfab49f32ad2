// V16, scalar backend: sixteen floats in an array; std::fma for fused multiply-add.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace anchorage::kernels::isa_scalar {

struct V16 {
  float l[16];

  static V16 zero() {
    V16 r;
    for (int i = 0; i < 16; ++i) r.l[i] = 0.0f;
    return r;
  }
  static V16 bcast(float x) {
    V16 r;
    for (int i = 0; i < 16; ++i) r.l[i] = x;
    return r;
  }
  static V16 load(const float* p) {
    V16 r;
    std::memcpy(r.l, p, 64);
    return r;
  }
  // Lanes [0, n) from p, the rest +0.0f. 0 <= n <= 16.
  static V16 load_partial(const float* p, int n) {
    V16 r = zero();
    for (int i = 0; i < n; ++i) r.l[i] = p[i];
    return r;
  }
  static V16 load_bf16(const uint16_t* p) {
    V16 r;
    for (int i = 0; i < 16; ++i) {
      uint32_t u = uint32_t(p[i]) << 16;
      std::memcpy(&r.l[i], &u, 4);
    }
    return r;
  }
  static V16 load_bf16_partial(const uint16_t* p, int n) {
    V16 r = zero();
    for (int i = 0; i < n; ++i) {
      uint32_t u = uint32_t(p[i]) << 16;
      std::memcpy(&r.l[i], &u, 4);
    }
    return r;
  }
  // 32 bf16 as two V16 in the pair order of this ISA, which here is element order (the
  // vector builds interleave: v16_avx512.h); store_pairs / load_pairs translate.
  static void load_bf16_pairs(const uint16_t* p, V16& lo, V16& hi) {
    lo = load_bf16(p);
    hi = load_bf16(p + 16);
  }
  static void store_pairs(V16 lo, V16 hi, float* p) {
    lo.store(p);
    hi.store(p + 16);
  }
  static void load_pairs(const float* p, V16& lo, V16& hi) {
    lo = load(p);
    hi = load(p + 16);
  }
  void store(float* p) const { std::memcpy(p, l, 64); }
  void store_partial(float* p, int n) const {
    for (int i = 0; i < n; ++i) p[i] = l[i];
  }
  float lane(int i) const { return l[i]; }

  // Sign flip (exact; -(+0) = -0, unlike 0 - x).
  friend V16 operator-(V16 a) {
    for (int i = 0; i < 16; ++i) a.l[i] = -a.l[i];
    return a;
  }
  friend V16 operator+(V16 a, V16 b) {
    for (int i = 0; i < 16; ++i) a.l[i] += b.l[i];
    return a;
  }
  friend V16 operator-(V16 a, V16 b) {
    for (int i = 0; i < 16; ++i) a.l[i] -= b.l[i];
    return a;
  }
  friend V16 operator*(V16 a, V16 b) {
    for (int i = 0; i < 16; ++i) a.l[i] *= b.l[i];
    return a;
  }
  friend V16 operator/(V16 a, V16 b) {
    for (int i = 0; i < 16; ++i) a.l[i] /= b.l[i];
    return a;
  }
  // a * b + c, one rounding.
  static V16 fma(V16 a, V16 b, V16 c) {
    for (int i = 0; i < 16; ++i) a.l[i] = std::fma(a.l[i], b.l[i], c.l[i]);
    return a;
  }
  static V16 max(V16 a, V16 b) {  // b where a is NaN, as maxps does with a first
    for (int i = 0; i < 16; ++i) a.l[i] = a.l[i] > b.l[i] ? a.l[i] : b.l[i];
    return a;
  }
  static V16 min(V16 a, V16 b) {
    for (int i = 0; i < 16; ++i) a.l[i] = a.l[i] < b.l[i] ? a.l[i] : b.l[i];
    return a;
  }
  static V16 sqrt(V16 a) {
    for (int i = 0; i < 16; ++i) a.l[i] = std::sqrt(a.l[i]);
    return a;
  }
  // Round to nearest integer, ties to even (the default rounding mode).
  static V16 round(V16 a) {
    for (int i = 0; i < 16; ++i) a.l[i] = std::nearbyint(a.l[i]);
    return a;
  }
  // 2^n for integral n in [-126, 127] held as floats.
  static V16 pow2i(V16 n) {
    V16 r;
    for (int i = 0; i < 16; ++i) {
      uint32_t u = uint32_t(int32_t(n.l[i]) + 127) << 23;
      std::memcpy(&r.l[i], &u, 4);
    }
    return r;
  }
  // Lane-wise a < b ? x : y.
  static V16 select_lt(V16 a, V16 b, V16 x, V16 y) {
    for (int i = 0; i < 16; ++i) x.l[i] = a.l[i] < b.l[i] ? x.l[i] : y.l[i];
    return x;
  }
  // The canonical fold: lanes l and l+8, then l and l+4, l+2, l+1.
  float reduce_add() const {
    float t[16];
    std::memcpy(t, l, 64);
    for (int w = 8; w >= 1; w /= 2)
      for (int i = 0; i < w; ++i) t[i] = t[i] + t[i + w];
    return t[0];
  }
  // Lanes in order 0..15, m = l[i] > m ? l[i] : m: a NaN lane other than lane 0 is skipped.
  float reduce_max() const {
    float m = l[0];
    for (int i = 1; i < 16; ++i) m = l[i] > m ? l[i] : m;
    return m;
  }
};

}  // namespace anchorage::kernels::isa_scalar

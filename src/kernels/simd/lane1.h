// Lane1: one f32 lane with V16's interface (the subset the element-wise bodies use), so a body
// written over V16 (kernels/exp_impl.h) also gives the scalar functions of activation.h. Each
// operation is the same IEEE-exact operation a V16 lane performs, so a scalar result has the
// bits of the vector lane for the same input (tested in tests/kernels/activation_test.cc).
// Stateless; any thread. Use it from baseline-compiled files only: its inline members compiled
// under an ISA's flags would be shared (one definition) with the baseline build.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace anchorage::kernels {

struct Lane1 {
  float x;

  static Lane1 bcast(float v) { return {v}; }
  float lane(int) const { return x; }

  friend Lane1 operator-(Lane1 a) { return {-a.x}; }
  friend Lane1 operator+(Lane1 a, Lane1 b) { return {a.x + b.x}; }
  friend Lane1 operator-(Lane1 a, Lane1 b) { return {a.x - b.x}; }
  friend Lane1 operator*(Lane1 a, Lane1 b) { return {a.x * b.x}; }
  friend Lane1 operator/(Lane1 a, Lane1 b) { return {a.x / b.x}; }
  static Lane1 fma(Lane1 a, Lane1 b, Lane1 c) { return {std::fma(a.x, b.x, c.x)}; }
  static Lane1 max(Lane1 a, Lane1 b) { return {a.x > b.x ? a.x : b.x}; }
  static Lane1 min(Lane1 a, Lane1 b) { return {a.x < b.x ? a.x : b.x}; }
  static Lane1 sqrt(Lane1 a) { return {std::sqrt(a.x)}; }
  static Lane1 round(Lane1 a) { return {std::nearbyint(a.x)}; }
  static Lane1 pow2i(Lane1 n) {
    uint32_t u = uint32_t(int32_t(n.x) + 127) << 23;
    float r;
    std::memcpy(&r, &u, 4);
    return {r};
  }
  static Lane1 select_lt(Lane1 a, Lane1 b, Lane1 x, Lane1 y) { return a.x < b.x ? x : y; }
};

}  // namespace anchorage::kernels

// The two passes of vocab_exp_sum (engine/vocab_exp.h) around its exp, and the sampler's count
// of logits at or above a threshold, compiled once per ISA (vocab_exp.cc and vocab_exp_avx2.cc
// include this header; nothing else does). Plain loops the compiler vectorizes: elementwise f32
// steps, 16 lane sums each its own chain in order, and integer counts, so every build gives the
// same bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::engine::vocab_detail {
namespace {

// w_i = (x_i - max_logit) * inv_t.
inline void scale_any(const float* __restrict x, size_t m, float max_logit, float inv_t,
                      float* __restrict w) {
  for (size_t i = 0; i < m; ++i) w[i] = (x[i] - max_logit) * inv_t;
}

// sums[l] += double(w[l]), double(w[l + 16]), ... in order (a tail shorter than 16 goes to the
// first lanes).
inline void add_lanes_any(const float* __restrict w, size_t m, double* __restrict sums) {
  const size_t whole = m / 16 * 16;
  for (size_t i = 0; i < whole; i += 16)
    for (size_t l = 0; l < 16; ++l) sums[l] += double(w[i + l]);
  for (size_t i = whole; i < m; ++i) sums[i - whole] += double(w[i]);
}

// counts[j] = how many of x[0, n) are >= t[j], j < 4 (a NaN never is; n < 2^31): one pass for
// the four, 8 counters each, a vector of them.
inline void counts_at_least_any(const float* __restrict x, size_t n, const float* t,
                                int64_t* counts) {
  int32_t c[4][8] = {};
  const float t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3];
  const size_t whole = n / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    for (size_t l = 0; l < 8; ++l) {
      c[0][l] += x[i + l] >= t0;
      c[1][l] += x[i + l] >= t1;
      c[2][l] += x[i + l] >= t2;
      c[3][l] += x[i + l] >= t3;
    }
  }
  for (int j = 0; j < 4; ++j) {
    int64_t count = 0;
    for (const int32_t v : c[j]) count += v;
    for (size_t i = whole; i < n; ++i) count += x[i] >= t[j];
    counts[j] = count;
  }
}

}  // namespace
}  // namespace anchorage::engine::vocab_detail

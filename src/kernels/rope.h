// Partial NeoX rotary embedding (docs/model.md §3.3): for each head vector x of width D
// at position p, pairs (i, i + R/2) for i < R/2 rotate by φ = p · theta^(-2i/R) (both formed
// in fp32); dims R..D-1 are unchanged. cos/sin come from libm per (position, i), so the same
// position always gets the same bits. Pinned (kernels/rope.cc, rope_impl.h):
//   inv_freq[i] = 1 / powf(theta, float(2i) / float(R));  φ = float(p) · inv_freq[i]
//   c = cosf(φ), s = sinf(φ);  x'[i] = x[i]·c - x[i+R/2]·s;  x'[i+R/2] = x[i+R/2]·c + x[i]·s
// every product rounded (no fma), as HF's fp32 q·cos + rotate_half(q)·sin. Calling thread only.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// x: [T][ldx], heads of width D at x[t*ldx + h*D], h < n_heads; token t is at pos0 + t.
void rope_neox(float* x, int64_t T, int64_t ldx, int64_t n_heads, int64_t D, int64_t R,
               int64_t pos0, float theta);

}  // namespace anchorage::kernels

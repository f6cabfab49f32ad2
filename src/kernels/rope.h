// Partial NeoX rotary embedding (docs/model-qwen35.md §3.3): for each head vector x of width D
// at position p, pairs (i, i + R/2) for i < R/2 rotate by φ = p · theta^(-2i/R) (both formed
// in fp32); dims R..D-1 are unchanged. cos/sin come from libm per (position, i), so the same
// position always gets the same bits.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// x: [T][ldx], heads of width D at x[t*ldx + h*D], h < n_heads; token t is at pos0 + t.
void rope_neox(float* x, int64_t T, int64_t ldx, int64_t n_heads, int64_t D, int64_t R,
               int64_t pos0, float theta);

}  // namespace anchorage::kernels

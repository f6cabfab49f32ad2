// gemm_ref: the definition of kernels::gemm (kernels/gemm.h), as a plain loop. Tests compare
// every SIMD path against it with memcmp; it is never on a serving path.
// Pure function; safe to call from any thread.
#pragma once

#include <cstdint>

#include "kernels/packed_weight.h"

namespace anchorage::kernels {

// x: [M][ldx] f32, w: [N][K] (PackedWeight, read through at()), y: [M][ldy] f32.
// y[m][n] = fma chain over k = 0..K-1 in order from +0.0f: acc = fma(x[m][k], W[n][k], acc).
void gemm_ref(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y, int64_t ldy);

}  // namespace anchorage::kernels

// gemm_ref: the definition of kernels::gemm (kernels/gemm.h), as a plain loop. Tests compare
// every SIMD path against it with memcmp; it is never on a serving path.
// Pure function; safe to call from any thread.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/packed_weight.h"

namespace anchorage::kernels {

// x: [M][ldx] f32, w: [N][K] (PackedWeight, read through at()), y: [M][ldy] f32.
// y[m][n] = fma chain over k = 0..K-1 in order from +0.0f: acc = fma(x[m][k], W[n][k], acc).
void gemm_ref(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y, int64_t ldy);

// The integer-dot GEMM (kernels/quant_dot.h) for the types it covers, read from the GGUF rows
// themselves (rows: [N] rows of K elements of `type`, back to back), written without the
// kernels' layout or code. For finite x: each block of B activations (B = 32 for Q8_0) is
// d = max|x| / 127, q = nearest-even(x / d) (x * (1 / d), in f32), and per output, for the
// blocks in order: acc = fma(float(sum of w_q * x_q), w_d * d, acc) from +0.0f. Q4_K: blocks of
// 256 activations; per block S = sum_j sc_j * (sum of q * x_q over sub-block j), Mn = sum_j m_j *
// (sum of x_q over sub-block j), acc = fma(float(S), d * xd, acc), then
// acc = fma(-float(Mn), dmin * xd, acc); Q5_K the same with 5-bit codes. Q6_K: S = sum_j sc_j *
// (sum of (q - 32) * x_q over sub-block j of 16). IQ4_XS: S = sum_j (ls_j - 32) * (sum of
// level * x_q over sub-block j of 32). Both: acc = fma(float(S), d * xd, acc).
void gemm_int8_ref(const float* x, int64_t M, int64_t ldx, const void* rows, core::DType type,
                   int64_t N, int64_t K, float* y, int64_t ldy);

}  // namespace anchorage::kernels

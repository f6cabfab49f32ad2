// Element-wise activations (docs/model.md §0). exp is the project's own fixed
// polynomial (kernels/exp), identical in every ISA, so results are the same bits everywhere.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x * sigmoid(x), computed as x / (1 + exp(-x))
// (one rounding fewer; pinned in kernels/exp_impl.h). Same bits as the vector kernels' lanes.
float sigmoid(float x);
float silu(float x);
// softplus(x) = log(1 + exp(x)), and x itself when x > 20 (PyTorch's and ggml's threshold).
float softplus(float x);
// The project's exp (kernels/exp_impl.h: Cody-Waite, degree-7 Horner with fma, 2^n by exponent
// bits; <= 1 ulp; exp(x > 88.7) = inf, exp(x < -87.3) = 0, NaN stays NaN): same bits as the
// vector paths.
float exp_f32(float x);
// y[i] = exp_f32(x[i]), n elements, vectorized (the sampler's weights); y may alias x.
void exp_row(const float* x, int64_t n, float* y);

// out[i] = silu(gate[i]) * up[i], n elements (the SwiGLU FFN, §4.2). out may alias either.
// Element-wise kernels run on the calling thread.
void swiglu(const float* gate, const float* up, int64_t n, float* out);
// x[i] = x[i] * sigmoid(gate[i]) (the attention output gate, §3.4), for T rows of width n:
// x: [T][ldx], gate: [T][ldg].
void mul_sigmoid(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n);
// y[i] = x[i] + r[i] (residual add), n elements; y may alias x or r.
void add(const float* x, const float* r, int64_t n, float* y);

}  // namespace anchorage::kernels

// Element-wise activations (docs/model-qwen35.md §0). exp is the project's own fixed
// polynomial (kernels/exp), identical in every ISA, so results are the same bits everywhere.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x * sigmoid(x).
float sigmoid(float x);
float silu(float x);
// softplus(x) = log(1 + exp(x)), and x itself when x > 20 (PyTorch's and ggml's threshold).
float softplus(float x);
// The project's exp (kernels/exp): same bits as the vector paths.
float exp_f32(float x);

// out[i] = silu(gate[i]) * up[i], n elements (the SwiGLU FFN, §4.2). out may alias either.
void swiglu(const float* gate, const float* up, int64_t n, float* out);
// x[i] *= sigmoid(gate[i]) (the attention output gate, §3.4), for T rows of width n:
// x: [T][ldx], gate: [T][ldg].
void mul_sigmoid(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n);
// y[i] = x[i] + r[i] (residual add), n elements; y may alias x or r.
void add(const float* x, const float* r, int64_t n, float* y);

}  // namespace anchorage::kernels

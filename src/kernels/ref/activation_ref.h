// activation_ref: the definitions of the element-wise ops of kernels/activation.h, as plain
// loops in double (docs/model.md §0). Tests compare the fp32 kernels against them
// within a stated tolerance; never on a serving path. Pure functions; any thread.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

double exp_ref(double x);
double sigmoid_ref(double x);   // 1 / (1 + exp(-x))
double silu_ref(double x);      // x · sigmoid(x)
double softplus_ref(double x);  // log(1 + exp(x)), x itself when x > 20

// Same arguments as the kernels; each element computed in double, rounded once at the end.
void swiglu_ref(const float* gate, const float* up, int64_t n, float* out);
void mul_sigmoid_ref(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n);
void add_ref(const float* x, const float* r, int64_t n, float* y);

}  // namespace anchorage::kernels

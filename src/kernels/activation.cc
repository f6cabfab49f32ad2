#include "kernels/activation.h"

#include <cmath>

#include "kernels/simd/lane1.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

namespace scalar_lane {
// exp_v, sigmoid_v, silu_v over Lane1: the operation sequence of the vector builds.
#include "kernels/exp_impl.h"
}  // namespace scalar_lane

float exp_f32(float x) {
  return scalar_lane::exp_v(Lane1{x}).x;
}
float sigmoid(float x) {
  return scalar_lane::sigmoid_v(Lane1{x}).x;
}
float silu(float x) {
  return scalar_lane::silu_v(Lane1{x}).x;
}

// log1p from libm: scalar only (the gates call it n_v times a token), so the ISA never changes it.
float softplus(float x) {
  return x > 20.0f ? x : std::log1p(exp_f32(x));
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  vector_kernels().swiglu(gate, up, n, out);
}

void mul_sigmoid(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n) {
  vector_kernels().mul_sigmoid(x, ldx, gate, ldg, T, n);
}

void add(const float* x, const float* r, int64_t n, float* y) {
  vector_kernels().add(x, r, n, y);
}

void exp_row(const float* x, int64_t n, float* y) {
  vector_kernels().exp(x, n, y);
}

}  // namespace anchorage::kernels

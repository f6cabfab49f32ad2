#include "kernels/ref/activation_ref.h"

#include <cmath>

namespace anchorage::kernels {

double exp_ref(double x) {
  return std::exp(x);
}
double sigmoid_ref(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double silu_ref(double x) {
  return x * sigmoid_ref(x);
}
double softplus_ref(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}

void swiglu_ref(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = float(silu_ref(gate[i]) * double(up[i]));
}

void mul_sigmoid_ref(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < n; ++i) {
      x[t * ldx + i] = float(double(x[t * ldx + i]) * sigmoid_ref(gate[t * ldg + i]));
    }
  }
}

void add_ref(const float* x, const float* r, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = float(double(x[i]) + double(r[i]));
}

}  // namespace anchorage::kernels

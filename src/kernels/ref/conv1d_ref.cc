#include "kernels/ref/conv1d_ref.h"

#include <cstddef>
#include <vector>

#include "kernels/ref/activation_ref.h"

namespace anchorage::kernels {

void conv1d_silu_ref(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail, const float* w,
                     int64_t Kc, float* y, int64_t ldy) {
  const int64_t nt = Kc - 1;
  for (int64_t c = 0; c < C; ++c) {
    // X_c, oldest first: the tail, then the T new inputs.
    std::vector<float> X(size_t(nt + T));
    for (int64_t m = 0; m < nt; ++m) X[size_t(m)] = tail[m * C + c];
    for (int64_t t = 0; t < T; ++t) X[size_t(nt + t)] = x[t * ldx + c];
    for (int64_t t = 0; t < T; ++t) {
      double s = 0.0;
      for (int64_t j = 0; j < Kc; ++j) s += double(w[j * C + c]) * double(X[size_t(t + j)]);
      y[t * ldy + c] = float(silu_ref(s));
    }
    for (int64_t m = 0; m < nt; ++m) tail[m * C + c] = X[size_t(T + m)];
  }
}

}  // namespace anchorage::kernels

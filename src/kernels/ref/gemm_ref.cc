#include "kernels/ref/gemm_ref.h"

#include <cmath>

namespace anchorage::kernels {

void gemm_ref(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y,
              int64_t ldy) {
  const int64_t K = w.cols(), N = w.rows();
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(x[m * ldx + k], w.at(n, k), acc);
      y[m * ldy + n] = acc;
    }
  }
}

}  // namespace anchorage::kernels

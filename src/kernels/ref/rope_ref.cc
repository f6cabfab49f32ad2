#include "kernels/ref/rope_ref.h"

#include <cmath>

namespace anchorage::kernels {

void rope_neox_ref(float* x, int64_t T, int64_t ldx, int64_t n_heads, int64_t D, int64_t R,
                   int64_t pos0, float theta) {
  const int64_t half = R / 2;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + t * ldx + h * D;
      for (int64_t i = 0; i < half; ++i) {
        const float inv_freq = 1.0f / std::pow(theta, float(2 * i) / float(R));
        const float phi = float(pos0 + t) * inv_freq;
        const double c = std::cos(double(phi));
        const double s = std::sin(double(phi));
        const double a = xh[i];
        const double b = xh[i + half];
        xh[i] = float(a * c - b * s);
        xh[i + half] = float(b * c + a * s);
      }
    }
  }
}

}  // namespace anchorage::kernels

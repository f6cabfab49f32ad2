#include "kernels/ref/norm_ref.h"

#include <cmath>

#include "kernels/ref/activation_ref.h"

namespace anchorage::kernels {

namespace {

double sum_squares(const float* x, int64_t d) {
  double s = 0.0;
  for (int64_t i = 0; i < d; ++i) s += double(x[i]) * double(x[i]);
  return s;
}

void rms(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, double offset,
         float eps, float* y, int64_t ldy) {
  for (int64_t t = 0; t < T; ++t) {
    const float* xr = x + t * ldx;
    const double inv = 1.0 / std::sqrt(sum_squares(xr, d) / double(d) + double(eps));
    for (int64_t i = 0; i < d; ++i) y[t * ldy + i] = float(xr[i] * inv * (offset + w[i]));
  }
}

}  // namespace

void rmsnorm_ref(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                 float* y, int64_t ldy) {
  rms(x, T, d, ldx, w, 0.0, eps, y, ldy);
}

void rmsnorm_1p_ref(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                    float* y, int64_t ldy) {
  rms(x, T, d, ldx, w, 1.0, eps, y, ldy);
}

void l2norm_heads_ref(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx, float eps,
                      float scale) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + t * ldx + h * d;
      const double inv = 1.0 / std::sqrt(sum_squares(xh, d) + double(eps));
      for (int64_t i = 0; i < d; ++i) xh[i] = float(xh[i] * inv * scale);
    }
  }
}

void gated_rmsnorm_ref(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                       int64_t n_heads, int64_t d, const float* w, float eps, float* y,
                       int64_t ldy) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      const float* oh = o + t * ldo + h * d;
      const float* zh = z + t * ldz + h * d;
      const double inv = 1.0 / std::sqrt(sum_squares(oh, d) / double(d) + double(eps));
      for (int64_t i = 0; i < d; ++i) {
        y[t * ldy + h * d + i] = float(oh[i] * inv * w[i] * silu_ref(zh[i]));
      }
    }
  }
}

}  // namespace anchorage::kernels

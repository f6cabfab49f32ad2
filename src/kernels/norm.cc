#include "kernels/norm.h"

#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

void rmsnorm(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps, float* y,
             int64_t ldy) {
  vector_kernels().rmsnorm(x, T, d, ldx, w, false, eps, y, ldy);
}

void rmsnorm_1p(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                float* y, int64_t ldy) {
  vector_kernels().rmsnorm(x, T, d, ldx, w, true, eps, y, ldy);
}

void l2norm_heads(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx, float eps,
                  float scale) {
  vector_kernels().l2norm_heads(x, T, n_heads, d, ldx, eps, scale);
}

void gated_rmsnorm(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                   int64_t n_heads, int64_t d, const float* w, float eps, float* y, int64_t ldy) {
  vector_kernels().gated_rmsnorm(o, ldo, z, ldz, T, n_heads, d, w, eps, y, ldy);
}

}  // namespace anchorage::kernels

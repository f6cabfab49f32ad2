// norm_ref: the definitions of the row norms of kernels/norm.h (docs/model.md §0, §2.4,
// §2.9) as plain loops with double sums. Same arguments as the kernels. Tests compare the
// kernels against them within a stated tolerance; never on a serving path. Pure; any thread.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

void rmsnorm_ref(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                 float* y, int64_t ldy);
void rmsnorm_1p_ref(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                    float* y, int64_t ldy);
void l2norm_heads_ref(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx, float eps,
                      float scale);
void gated_rmsnorm_ref(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                       int64_t n_heads, int64_t d, const float* w, float eps, float* y,
                       int64_t ldy);

}  // namespace anchorage::kernels

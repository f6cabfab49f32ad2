#include "kernels/conv1d.h"

#include "core/check.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

void conv1d_silu(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail, const float* w,
                 int64_t Kc, float* y, int64_t ldy) {
  ANCHORAGE_CHECK(Kc >= 1 && Kc <= 16);  // kConvMaxTaps in kernels/conv1d_impl.h
  vector_kernels().conv1d_silu(x, T, C, ldx, tail, w, Kc, y, ldy);
}

}  // namespace anchorage::kernels

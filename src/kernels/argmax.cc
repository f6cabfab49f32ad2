#include "kernels/argmax.h"

#include "core/check.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

int64_t argmax(const float* x, int64_t n) {
  ANCHORAGE_CHECK(n >= 1 && n < (int64_t(1) << 24));
  return vector_kernels().argmax(x, n);
}

}  // namespace anchorage::kernels

#include "kernels/vector_kernel_table.h"

#include "core/check.h"

namespace anchorage::kernels {

const VectorKernelTable& vector_kernels(core::Isa isa) {
  ANCHORAGE_CHECK(int(isa) <= int(core::detected_isa()));
  switch (isa) {
    case core::Isa::kAvx512:
      return isa_avx512::kVectorKernels;
    case core::Isa::kAvx2:
      return isa_avx2::kVectorKernels;
    case core::Isa::kScalar:
      break;
  }
  return isa_scalar::kVectorKernels;
}

const VectorKernelTable& vector_kernels() {
  return vector_kernels(core::active_isa());
}

}  // namespace anchorage::kernels

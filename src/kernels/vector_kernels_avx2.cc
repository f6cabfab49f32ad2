// The V16 kernels built for avx2 (kernels/vector_kernel_table.h). This file holds no code of
// its own: the bodies are kernels/*_impl.h, shared by the three ISA builds.
#define ANCHORAGE_V16_AVX2

#include <cstdint>

#include "kernels/simd/v16.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels::isa_avx2 {
#include "kernels/vector_kernels_body.h"
}  // namespace anchorage::kernels::isa_avx2

// rope_ref: the definition of kernels::rope_neox (docs/model.md §3.3) as a plain loop:
// inv_freq and the angle p · inv_freq formed in fp32 as the spec says, cos/sin and the rotation
// in double. Same arguments as the kernel. For tests only. Pure; any thread.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

void rope_neox_ref(float* x, int64_t T, int64_t ldx, int64_t n_heads, int64_t D, int64_t R,
                   int64_t pos0, float theta);

}  // namespace anchorage::kernels

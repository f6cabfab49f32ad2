// conv1d_ref: the definition of kernels::conv1d_silu (docs/model.md §2.3) as a plain
// loop over the concatenation X = [tail | x], the tap sum and SiLU in double. Same arguments as
// the kernel (tail updated in place the same way). For tests only. Pure; any thread.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

void conv1d_silu_ref(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail, const float* w,
                     int64_t Kc, float* y, int64_t ldy);

}  // namespace anchorage::kernels

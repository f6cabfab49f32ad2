// The attention tile kernel built for scalar (kernels/attention_job.h). This file holds no
// code of its own beyond the register blocking: the body is kernels/attention_impl.h and
// attention_blocks_impl.h, shared by the three ISA builds, so every ISA computes the same
// operations in the same order (the blocking decides which rows share a load, not a bit).
// No SIMD: the fallback for CPUs without AVX2 + FMA (V16 is sixteen floats, std::fma). The
// blocking hardly matters here; the wide decode scoring is off (one block per pass).
#define ANCHORAGE_V16_SCALAR

#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_job.h"
#include "kernels/simd/v16.h"

namespace anchorage::kernels::isa_scalar {

// In this order: the driver calls the block kernels and exp_v.
#include "kernels/exp_impl.h"

#include "kernels/attention_blocks_impl.h"

#include "kernels/attention_impl.h"

void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch) {
  attention_tile_impl<4, 2, 2, 1, 1>(job, kv_head, t0, t1, scratch);
}

}  // namespace anchorage::kernels::isa_scalar

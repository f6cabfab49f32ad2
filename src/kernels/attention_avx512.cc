// The attention tile kernel built for avx512 (kernels/attention_job.h). This file holds no
// code of its own beyond the register blocking: the body is kernels/attention_impl.h and
// attention_blocks_impl.h, shared by the three ISA builds, so every ISA computes the same
// operations in the same order (the blocking decides which rows share a load, not a bit).
// 8 score rows = 16 zmm accumulators (enough independent FMA chains for two pipes), each K
// vector shared by 8 broadcasts; the P·V tile 4 rows x 4 column vectors = 16 accumulators + 4
// V vectors; a decode tile scores 2 rows x 4 blocks (16 + 8 K vectors).
#define ANCHORAGE_V16_AVX512

#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_job.h"
#include "kernels/simd/v16.h"

namespace anchorage::kernels::isa_avx512 {

// In this order: the driver calls the block kernels and exp_v.
#include "kernels/exp_impl.h"

#include "kernels/attention_blocks_impl.h"

#include "kernels/attention_impl.h"

void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch) {
  attention_tile_impl<8, 4, 4, 2, 4>(job, kv_head, t0, t1, scratch);
}

}  // namespace anchorage::kernels::isa_avx512

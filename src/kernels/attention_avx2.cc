// The attention tile kernel built for avx2 (kernels/attention_job.h). This file holds no
// code of its own beyond the register blocking: the body is kernels/attention_impl.h and
// attention_blocks_impl.h, shared by the three ISA builds, so every ISA computes the same
// operations in the same order (the blocking decides which rows share a load, not a bit).
// A V16 is two ymm: 2 score rows = 8 accumulator ymm + 4 for the K vectors; the P·V tile
// 2 rows x 2 column vectors = 8 + 4 for V; a decode tile scores 1 row x 2 blocks (8 + 8).
#define ANCHORAGE_V16_AVX2

#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_job.h"
#include "kernels/simd/v16.h"

namespace anchorage::kernels::isa_avx2 {

// In this order: the driver calls the block kernels and exp_v.
#include "kernels/exp_impl.h"

#include "kernels/attention_blocks_impl.h"

#include "kernels/attention_impl.h"

void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch) {
  // Register blocking only (it never changes a bit). With bf16 K a decode tile's two rows
  // share each K load, one key block a pass; f32 keeps one row over two blocks a pass
  // (docs/kernels.md "Attention", Speed: the bf16 choice measured at 32k, f32's at 8k).
  if (job.bf16) {
    attention_tile_impl<2, 2, 2, 2, 1>(job, kv_head, t0, t1, scratch);
  } else {
    attention_tile_impl<2, 2, 2, 1, 2>(job, kv_head, t0, t1, scratch);
  }
}

}  // namespace anchorage::kernels::isa_avx2

// AttentionJob: the plain description of one attention() call that attention.cc hands to the
// per-ISA tile kernels (attention_scalar.cc, _avx2.cc, _avx512.cc, bodies in attention_impl.h),
// plus the tiling constants they share.
//
// Raw pointers and integers only: the ISA files are compiled with different -m flags, and a
// std:: template instantiated in one of them could be merged by the linker into callers built
// for a lower ISA (the ODR trap gemm_job.h describes). Threading stays in attention.cc.
//
// A tile is the query rows t in [t0, t1) of every query head of one KV head. Tiles never share
// an output element, so any number of threads may run distinct tiles of one job at once.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

struct AttentionJob {
  const float* q = nullptr;  // [T][ldq], query head h at h * D
  int64_t ldq = 0;
  int64_t T = 0;
  int64_t pos0 = 0;         // row t is at position pos0 + t
  const void* K = nullptr;  // [n_kv][D][capacity], f32 or bf16
  const void* V = nullptr;  // [n_kv][capacity][D]
  bool bf16 = false;
  int64_t n_q = 0;
  int64_t n_kv = 0;
  int64_t D = 0;
  int64_t capacity = 0;
  float scale = 0.0f;    // float(1 / sqrt(double(D))), formed once in attention.cc
  float* out = nullptr;  // [T][ldo], head h at h * D
  int64_t ldo = 0;
};

// Query rows of one tile (positions x heads). Every K/V block a tile reads is shared by its
// rows, so a larger tile reads the cache fewer times per FLOP: with 128 rows a 1024-query
// prefill chunk at a 32k context ran at 132 GFLOP/s per CPU second, with 64 rows at 124
// (small's dims, f32 cache, AVX-512; docs/kernels.md).
constexpr int64_t kAttnMaxTileRows = 128;
constexpr int64_t kAttnMaxD = 512;
// A tile of fewer than kAttnWideMaxRows rows (a decode step: the query heads of one KV head)
// scores several key blocks per pass over K (memory-bound: longer runs of each K row) and
// prefetches kAttnDecodePrefetchBlocks blocks ahead; a larger tile prefetches the next block.
constexpr int64_t kAttnWideMaxRows = 16;
constexpr int64_t kAttnDecodePrefetchBlocks = 8;
// The per-thread scratch of a tile, in floats (attention.cc owns it, one per thread): output
// accumulators [rows][D], scores [rows][32], lane maxima and denominators [rows][16] each, and
// three per-row scalars. 290 KiB: too much for a stack frame.
constexpr int64_t kAttnScratchFloats = kAttnMaxTileRows * (kAttnMaxD + 32 + 16 + 16 + 3);

namespace isa_scalar {
void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch);
}
namespace isa_avx2 {
void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch);
}
namespace isa_avx512 {
void attention_tile(const AttentionJob& job, int64_t kv_head, int64_t t0, int64_t t1,
                    float* scratch);
}

}  // namespace anchorage::kernels

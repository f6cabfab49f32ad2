// kv_store() and attention(): the checks, the tile split and the thread pool; the arithmetic
// is the tile kernel of the active ISA (attention_impl.h via attention_{avx512,avx2,scalar}.cc).
// Tiles partition the query rows and heads, never the keys of a row, so neither the split nor
// the thread count can change a bit of the result (attention.h).
#include "kernels/attention.h"

#include <cmath>

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "core/isa.h"
#include "kernels/attention_job.h"

namespace anchorage::kernels {

namespace {

using TileFn = void (*)(const AttentionJob&, int64_t, int64_t, int64_t, float*);

TileFn tile_fn() {
  switch (core::active_isa()) {
    case core::Isa::kAvx512:
      return &isa_avx512::attention_tile;
    case core::Isa::kAvx2:
      return &isa_avx2::attention_tile;
    case core::Isa::kScalar:
      break;
  }
  return &isa_scalar::attention_tile;
}

// The tile scratch of the calling thread: allocated on its first tile and reused by every
// later call (the only memory attention holds outside its arguments).
float* tile_scratch() {
  thread_local core::AlignedBuffer buf(size_t(kAttnScratchFloats) * sizeof(float));
  return buf.as<float>();
}

void check_dims(const AttentionDims& dims) {
  ANCHORAGE_CHECK(dims.n_q > 0 && dims.n_kv > 0 && dims.n_q % dims.n_kv == 0);
  ANCHORAGE_CHECK_MSG(dims.D > 0 && dims.D % 16 == 0 && dims.D <= kAttnMaxD,
                      "head width must be a multiple of 16, at most 512");
  ANCHORAGE_CHECK(dims.n_q / dims.n_kv <= kAttnMaxTileRows);
  ANCHORAGE_CHECK(dims.capacity > 0);
  ANCHORAGE_CHECK(dims.kv_dtype == core::DType::kF32 || dims.kv_dtype == core::DType::kBF16);
}

}  // namespace

void kv_store(const AttentionDims& dims, const float* k, int64_t ldk, const float* v, int64_t ldv,
              int64_t T, int64_t pos0, void* K, void* V) {
  check_dims(dims);
  ANCHORAGE_CHECK(T >= 0 && pos0 >= 0 && pos0 + T <= dims.capacity);
  const int64_t D = dims.D, cap = dims.capacity;
  const bool bf16 = dims.kv_dtype == core::DType::kBF16;
  // A decode step writes one element into each of K's n_kv · D rows, lines the step's weight
  // stream has evicted: ask for all of them first, so their misses overlap instead of each
  // store waiting for its line in turn.
  if (T <= 4) {
    const int64_t esize = bf16 ? 2 : 4;
    for (int64_t r = 0; r < dims.n_kv * D; ++r)
      __builtin_prefetch(static_cast<char*>(K) + (r * cap + pos0) * esize, 1);
  }
  // K row (j, d) is contiguous over positions: walk it in position order.
  for (int64_t j = 0; j < dims.n_kv; ++j) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t at = (j * D + d) * cap + pos0;
      const float* src = k + j * D + d;
      if (bf16) {
        uint16_t* dst = static_cast<uint16_t*>(K) + at;
        for (int64_t t = 0; t < T; ++t) dst[t] = core::f32_to_bf16(src[t * ldk]);
      } else {
        float* dst = static_cast<float*>(K) + at;
        for (int64_t t = 0; t < T; ++t) dst[t] = src[t * ldk];
      }
    }
  }
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < dims.n_kv; ++j) {
      const int64_t at = (j * cap + pos0 + t) * D;
      const float* src = v + t * ldv + j * D;
      if (bf16) {
        uint16_t* dst = static_cast<uint16_t*>(V) + at;
        for (int64_t d = 0; d < D; ++d) dst[d] = core::f32_to_bf16(src[d]);
      } else {
        float* dst = static_cast<float*>(V) + at;
        for (int64_t d = 0; d < D; ++d) dst[d] = src[d];
      }
    }
  }
}

void attention(const AttentionDims& dims, const float* q, int64_t ldq, int64_t T, int64_t pos0,
               const void* K, const void* V, float* out, int64_t ldo, core::ThreadPool* pool) {
  check_dims(dims);
  ANCHORAGE_CHECK(T >= 0 && pos0 >= 0 && pos0 + T <= dims.capacity);
  if (T == 0) return;
  AttentionJob job;
  job.q = q;
  job.ldq = ldq;
  job.T = T;
  job.pos0 = pos0;
  job.K = K;
  job.V = V;
  job.bf16 = dims.kv_dtype == core::DType::kBF16;
  job.n_q = dims.n_q;
  job.n_kv = dims.n_kv;
  job.D = dims.D;
  job.capacity = dims.capacity;
  job.scale = float(1.0 / std::sqrt(double(dims.D)));
  job.out = out;
  job.ldo = ldo;

  // A tile: the G query heads of one KV head x rows_per_tile positions (128 rows), so a decode
  // step (T = 1) still has n_kv tiles for the threads. The latest positions go first: they
  // have the most keys, and dynamic hand-out then ends with the cheap tiles.
  const int64_t G = dims.n_q / dims.n_kv;
  const int64_t rows_per_tile = kAttnMaxTileRows / G;
  const int64_t n_blocks = (T + rows_per_tile - 1) / rows_per_tile;
  const TileFn fn = tile_fn();
  core::parallel_for(pool, n_blocks * dims.n_kv, [&](int64_t task) {
    const int64_t rb = n_blocks - 1 - task / dims.n_kv, g = task % dims.n_kv;
    const int64_t t0 = rb * rows_per_tile;
    const int64_t t1 = t0 + rows_per_tile < T ? t0 + rows_per_tile : T;
    fn(job, g, t0, t1, tile_scratch());
  });
}

}  // namespace anchorage::kernels

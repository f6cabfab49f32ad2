// Causal GQA attention over the KV cache (docs/model-qwen35.md §3.4).
//
// Cache layout per layer (what the K and V views of the state are made of):
//   K: [n_kv][D][capacity]  — transposed, so the scores of a block of keys for one query are
//                             FMA chains over d with no horizontal sums;
//   V: [n_kv][capacity][D].
// Either f32 or bf16 (rounded to nearest even when stored; the chunk's own keys are read back
// from the cache like every other key, so rounding is the same in prefill and decode).
//
// Batch invariance: each query row walks its keys from position 0 in fixed blocks of
// kKeyBlock with an online softmax; its result depends only on its position and the cache
// rows [0, pos], not on the rows that share its call, where its chunk started, or threads.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace anchorage::kernels {

struct AttentionDims {
  int64_t n_q = 0;       // query heads
  int64_t n_kv = 0;      // KV heads; query head h uses KV head h / (n_q / n_kv)
  int64_t D = 0;         // head width
  int64_t capacity = 0;  // cache rows per KV head
  core::DType kv_dtype = core::DType::kF32;
};

constexpr int64_t kKeyBlock = 32;

// Writes rows [pos0, pos0+T) of the cache: k, v: [T][ldk] / [T][ldv] with KV head j at j*D.
void kv_store(const AttentionDims& dims, const float* k, int64_t ldk, const float* v,
              int64_t ldv, int64_t T, int64_t pos0, void* K, void* V);

// q: [T][ldq], query head h at q + h*D (normed and rotated). Token t is at position pos0 + t
// and attends cache rows [0, pos0 + t]. out: [T][ldo], head h at out + h*D:
// softmax(q·k / sqrt(D)) v. Rows and heads are split over the pool's threads.
void attention(const AttentionDims& dims, const float* q, int64_t ldq, int64_t T, int64_t pos0,
               const void* K, const void* V, float* out, int64_t ldo, core::ThreadPool* pool);

}  // namespace anchorage::kernels

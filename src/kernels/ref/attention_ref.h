// attention_ref: the definition of kernels::attention (kernels/attention.h) as a plain
// softmax: scores, their maximum, exponentials and sums all in double over every key
// t <= pos, the cache read through kv_at(). Tests compare the tiled kernel against it within
// a tolerance (the kernel's online softmax in f32 rounds differently); it is never on a
// serving path. Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace anchorage::kernels {

// Element d of KV head j at cache row t of K (is_k) or V, widened to f32.
float kv_at(const AttentionDims& dims, const void* cache, bool is_k, int64_t j, int64_t d,
            int64_t t);

// Same arguments as attention() (the pool is ignored).
void attention_ref(const AttentionDims& dims, const float* q, int64_t ldq, int64_t T, int64_t pos0,
                   const void* K, const void* V, float* out, int64_t ldo, core::ThreadPool* pool);

}  // namespace anchorage::kernels

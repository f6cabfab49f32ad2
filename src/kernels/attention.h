// Causal GQA attention over the KV cache (docs/model.md §3.4).
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
// rows [0, pos], not on the rows that share its call, where its chunk started, threads or the
// ISA (AVX-512, AVX2 and scalar give the same bits).
//
// The order of operations, for one query row q (head h, position p, KV head g = h / (n_q /
// n_kv)); every step is an IEEE f32 operation, exp is the project's (kernels/exp_impl.h):
//   c = float(1 / sqrt(double(D)));  m = -inf;  l16[0..16) = +0;  o[0..D) = +0
//   for each block b = 0 .. p / 32, keys j0 = 32b .. j0 + 31, of which n = min(32, p - j0 + 1)
//   are valid (n < 32 only in the row's last, diagonal block):
//     1. s[j] = acc · c, acc = FMA chain over d = 0 .. D-1 in order from +0:
//        acc = fma(q[d], K[g][d][j0 + j], acc)                       (all 32 lanes)
//     2. s[j] = -inf for j >= n                       (keys past p: never read as values)
//     3. t = max(s[0..15], s[16..31]) lane-wise (a > b ? a : b), then bm = the V16::reduce_max
//        fold of t: bm = t[0]; bm = t[i] > bm ? t[i] : bm for i = 1 .. 15
//     4. m_new = bm > m ? bm : m
//     5. alpha = exp(m - m_new)                       (first block: exp(-inf) = +0)
//     6. p[j] = exp(s[j] - m_new); p[j] = +0 for j >= n
//     7. l16[i] = l16[i] · alpha + (p[i] + p[i + 16]), i < 16        (lane-wise, no fma)
//     8. for each d: o[d] = o[d] · alpha, then for j = 0 .. n-1 ascending:
//        o[d] = fma(p[j], V[g][j0 + j][d], o[d])      (V rows past p are never read)
//     m = m_new
//   l = reduce_add(l16) (V16's canonical fold); out[d] = o[d] / l (a division, no reciprocal)
// Nothing in it depends on T, pos0, which rows share a tile or the thread count; a K or V
// row past p (stale, not yet written, NaN or inf) cannot change a bit. Threads split query
// rows and KV heads, never the keys of a row (a decode step splits the KV heads).
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
// bf16 caches round to nearest even (core::f32_to_bf16). Single-threaded.
void kv_store(const AttentionDims& dims, const float* k, int64_t ldk, const float* v, int64_t ldv,
              int64_t T, int64_t pos0, void* K, void* V);

// q: [T][ldq], query head h at q + h*D (normed and rotated). Token t is at position pos0 + t
// and attends cache rows [0, pos0 + t]. out: [T][ldo], head h at out + h*D:
// softmax(q·k / sqrt(D)) v. Rows and heads are split over the pool's threads (pool may be
// null: one thread). D must be a multiple of 16 (at most 512) and n_q a multiple of n_kv
// with n_q / n_kv <= 128; pos0 + T <= capacity. K and V must hold rows [0, pos0 + T) (store
// the chunk's own rows with kv_store first). out must not overlap q, K or V.
void attention(const AttentionDims& dims, const float* q, int64_t ldq, int64_t T, int64_t pos0,
               const void* K, const void* V, float* out, int64_t ldo, core::ThreadPool* pool);

}  // namespace anchorage::kernels

// The GEMM of every linear layer: y = x Wᵀ, i.e. y[m][n] = Σ_k x[m][k] · W[n][k].
//
// Batch invariance (docs/architecture.md §4): every y[m][n] is ONE fused multiply-add chain over
// k = 0, 1, ..., K-1 in order, starting from +0.0f. K is walked in fixed blocks, in order,
// with the partial sums kept exactly between blocks; threads split M and N, never K. So a
// row's result does not depend on M, on which rows share its tile, on the thread count, or on
// the ISA (AVX-512, AVX2 and scalar give the same bits; the scalar path uses std::fma).
// Weights of any storage type (packed_weight.h) multiply as their f32 values: f16 and the
// quantized types are unpacked to f32 a K block at a time first (or, for Q8_0 / Q4_K blocks of
// <= 8 rows on AVX-512, dequantized in registers to the same values), so the result equals the
// f32 GEMM over the dequantized weights bit for bit.
// Exception, on purpose: every quantized type's weights take integer dot products on
// per-row quantized activations by default (kernels/quant_dot.h: another fixed order, with the same
// invariance over M, threads and ISA); ANCHORAGE_QUANT_DOT=f32 restores the chain above.
#pragma once

#include <cstdint>
#include <span>

#include "core/thread_pool.h"
#include "kernels/packed_weight.h"

namespace anchorage::kernels {

// x: [M][ldx] f32 (K = w.cols() used), y: [M][ldy] f32 (N = w.rows() written).
// pool may be null (one thread).
void gemm(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y, int64_t ldy,
          core::ThreadPool* pool);

// One layer of a group: its weights and where its outputs go ([M][ldy], N = w->rows()).
struct GemmOutput {
  const PackedWeight* w;
  float* y;
  int64_t ldy;
};
inline constexpr size_t kMaxGemmGroup = 4;

// The layers that read the same input (q, k and v; gate and up; a Gated DeltaNet layer's input
// projections) in one call: every y the same bits as gemm() gives it, since a block's
// arithmetic does not depend on which call or thread runs it; the blocks of all the layers go
// through the pool at once (one round trip instead of one a layer: a decode step makes ~90),
// and each activation format is quantized once for the group.
void gemm_group(const float* x, int64_t M, int64_t ldx, std::span<const GemmOutput> outs,
                core::ThreadPool* pool);

}  // namespace anchorage::kernels

// Causal depthwise conv1d with SiLU and its tail state (docs/model.md §2.3).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace anchorage::kernels {

// x: [T][ldx] raw projections, C channels; tail: [Kc-1][C], oldest first (updated in place to
// the last Kc-1 inputs); w: [Kc][C] tap-major (w[j][c] multiplies X_c[t + j]; j = Kc-1 is the
// current token). y: [T][ldy] = silu(Σ_j w[j][c] · X_c[t+j]), the sum an FMA chain in j order
// from +0.0f, then silu as in activation.h. y must not alias x. Each (t, c) is computed alone
// (vectorised along c), so any split of the tokens into calls gives the same bits when the tail
// is carried, and so does any split of the channels: with a pool the channels are cut into
// ranges the threads run (a decode step's conv reads ~0.3 MB of tail, weights and inputs that
// the weights' stream has evicted, which one thread reads at its own speed). Kc <= 16.
void conv1d_silu(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail, const float* w,
                 int64_t Kc, float* y, int64_t ldy, core::ThreadPool* pool = nullptr);

}  // namespace anchorage::kernels

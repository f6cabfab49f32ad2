#include "kernels/conv1d.h"

#include "core/check.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

namespace {
// Channels a task: 1,024 gives 6 tasks to Qwen3.5-0.8B's 6,144 (a multiple of 16, so every
// range but the last is whole V16 blocks; the bits never depend on the cut anyway).
constexpr int64_t kConvChannelsPerTask = 1024;
}  // namespace

void conv1d_silu(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail, const float* w,
                 int64_t Kc, float* y, int64_t ldy, core::ThreadPool* pool) {
  ANCHORAGE_CHECK(Kc >= 1 && Kc <= 16);  // kConvMaxTaps in kernels/conv1d_impl.h
  const auto conv = vector_kernels().conv1d_silu;
  const int64_t tasks = (C + kConvChannelsPerTask - 1) / kConvChannelsPerTask;
  if (pool == nullptr || pool->n_threads() == 1 || tasks == 1) {
    conv(x, T, C, ldx, tail, w, C, Kc, y, ldy);
    return;
  }
  core::parallel_for(pool, tasks, [&](int64_t task) {
    const int64_t c0 = task * kConvChannelsPerTask;
    const int64_t n = C - c0 < kConvChannelsPerTask ? C - c0 : kConvChannelsPerTask;
    conv(x + c0, T, n, ldx, tail + c0, w + c0, C, Kc, y + c0, ldy);
  });
}

}  // namespace anchorage::kernels

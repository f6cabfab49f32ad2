// The GEMM block kernel without SIMD (contract: kernels/gemm.h, kernels/gemm_job.h): the
// fallback for CPUs without AVX2 + FMA, and the plainest statement of the order the SIMD
// kernels must reproduce: per output element, acc = +0.0f, then acc = fma(x[k], w[k], acc)
// for k = 0 .. K-1. std::fma rounds once, exactly like a vector FMA lane, so the bits match.
#include <cmath>

#include "core/dtype.h"
#include "kernels/gemm_job.h"

namespace anchorage::kernels::isa_scalar {
namespace {

inline float load_w(const float* w, int64_t i) {
  return w[i];
}
inline float load_w(const uint16_t* w, int64_t i) {
  return core::bf16_to_f32(w[i]);
}

// One row against one panel: 32 chains, walked k-major so the panel is read in order.
template <typename T>
void row_panel(const float* x, const T* panel, int64_t K, float* y, int64_t n_cols,
               bool accumulate) {
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = accumulate && j < n_cols ? y[j] : 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float xv = x[k];
    const T* wk = panel + k * 32;
    for (int j = 0; j < 32; ++j) acc[j] = std::fma(xv, load_w(wk, j), acc[j]);
  }
  for (int64_t j = 0; j < n_cols && j < 32; ++j) y[j] = acc[j];
}

template <typename T>
void run_block(const GemmJob& job, const T* panels, const GemmBlock& b) {
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; ++m) {
      row_panel(job.x + m * job.ldx, panels + p * job.K * 32, job.K, job.y + m * job.ldy + p * 32,
                job.N - p * 32, job.accumulate);
    }
  }
}

#include "kernels/unpack_impl.h"

}  // namespace

void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  unpack_kblocks_impl(dtype, blocks, n, out);
}

void unpack_f16(const uint16_t* src, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = core::f16_to_f32(src[i]);
}

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  if (job.bf16) {
    run_block(job, static_cast<const uint16_t*>(job.panels), b);
  } else {
    run_block(job, static_cast<const float*>(job.panels), b);
  }
}

}  // namespace anchorage::kernels::isa_scalar

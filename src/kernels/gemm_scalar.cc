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

// The integer-dot Q8_0 GEMM (kernels/quant_dot.h), the plainest statement of what the SIMD
// kernels (gemm_int8_impl.h) compute: per output, acc = +0.0f, then for every 32-input block
// kb in order acc = fma(float(isum), dw * dx, acc), where isum = the exact int32 sum of weight
// quant x activation quant over the block, dw the block's f16 scale as f32 and dx the
// activations' block scale. The integer sum is exact in any order; the float steps are
// spelled out (-ffp-contract=off), so every ISA gives these bits.
void int8_q8_0(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nb = job.K / 32, pstride = nb * 32 * 34;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; ++m) {
      const uint8_t* row = job.xq + m * job.ldq;
      const int8_t* a = reinterpret_cast<const int8_t*>(row);
      const float* dx = reinterpret_cast<const float*>(row + job.xd_off);
      float acc[32] = {};
      for (int64_t kb = 0; kb < nb; ++kb) {
        const uint8_t* blk = panels + p * pstride + kb * 32 * 34;
        int32_t isum[32] = {};
        for (int i = 0; i < 32; ++i) {
          const int8_t* w = reinterpret_cast<const int8_t*>(blk + (2 + i) * 32);
          const int32_t ai = a[kb * 32 + i];
          for (int l = 0; l < 32; ++l) isum[l] += int32_t(w[l]) * ai;
        }
        for (int l = 0; l < 32; ++l) {
          const float dw = core::f16_to_f32(uint16_t(blk[l] | blk[32 + l] << 8));
          acc[l] = std::fma(float(isum[l]), dw * dx[kb], acc[l]);
        }
      }
      float* y = job.y + m * job.ldy + p * 32;
      for (int64_t j = 0; j < job.N - p * 32 && j < 32; ++j) y[j] = acc[j];
    }
  }
}

}  // namespace

void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  unpack_kblocks_impl(dtype, blocks, n, out);
}

void unpack_f16(const uint16_t* src, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = core::f16_to_f32(src[i]);
}

void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return int8_q8_0(job, b);
    default:
      break;
  }
}

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  if (job.bf16) {
    run_block(job, static_cast<const uint16_t*>(job.panels), b);
  } else {
    run_block(job, static_cast<const float*>(job.panels), b);
  }
}

}  // namespace anchorage::kernels::isa_scalar

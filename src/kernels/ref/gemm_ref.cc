#include "kernels/ref/gemm_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/check.h"

namespace anchorage::kernels {

void gemm_ref(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y,
              int64_t ldy) {
  const int64_t K = w.cols(), N = w.rows();
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(x[m * ldx + k], w.at(n, k), acc);
      y[m * ldy + n] = acc;
    }
  }
}

namespace {

// One block of activations: its scale, and its quants into q.
float quantize_block_ref(const float* x, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  for (int64_t i = 0; i < n; ++i)
    q[i] = int8_t(std::clamp(std::nearbyint(x[i] * id), -127.0f, 127.0f));
  return d;
}

}  // namespace

void gemm_int8_ref(const float* x, int64_t M, int64_t ldx, const void* rows, core::DType type,
                   int64_t N, int64_t K, float* y, int64_t ldy) {
  ANCHORAGE_CHECK(type == core::DType::kQ8_0);
  const int64_t B = 32;
  const int64_t row_bytes = core::dtype_row_bytes(type, K);
  std::vector<int8_t> xq(static_cast<size_t>(K));
  std::vector<float> xd(static_cast<size_t>(K / B));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t b = 0; b < K / B; ++b)
      xd[size_t(b)] = quantize_block_ref(x + m * ldx + b * B, B, xq.data() + b * B);
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* row = static_cast<const uint8_t*>(rows) + n * row_bytes;
      float acc = 0.0f;
      for (int64_t b = 0; b < K / B; ++b) {
        const uint8_t* blk = row + b * 34;  // f16 d, 32 int8
        uint16_t h;
        std::memcpy(&h, blk, 2);
        int32_t sum = 0;
        for (int64_t i = 0; i < B; ++i)
          sum += int32_t(static_cast<int8_t>(blk[2 + i])) * xq[size_t(b * B + i)];
        acc = std::fma(float(sum), core::f16_to_f32(h) * xd[size_t(b)], acc);
      }
      y[m * ldy + n] = acc;
    }
  }
}

}  // namespace anchorage::kernels

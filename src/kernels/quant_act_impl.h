// The activation quantizer's operations (quant_dot.h), as the reference loops quantize_row_any
// runs: the scalar path (quant_dot.cc) and the fallback of the vector builds. quant_act_avx2.cc
// and quant_act_avx512.cc run the same operations 8 / 16 inputs at a time with intrinsics; the
// loops here, built at -O3 and left to the compiler to vectorize (until 2026-12-07), quantized a
// decode step's rows at 0.44 ns an input (256-input blocks) and 1.0 ns (32-input blocks), serial
// work on the calling thread of every quantized GEMM (docs/kernels.md). Every step is an exactly
// rounded IEEE operation or an integer one (no contraction: -ffp-contract=off), so every build
// writes the same bytes (tests/kernels/gemm_int8_test.cc QuantizeAct.EveryIsaWritesTheSameBytes).
#pragma once

#include <bit>
#include <cstdint>

namespace anchorage::kernels::quant_detail {

// Rows of K inputs: q (K int8), d (K / block scales), s (K / sum_block sums of q).
void quantize_row_avx2(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                       float* d, int32_t* s);
void quantize_row_avx512(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                         float* d, int32_t* s);

namespace {

// One block of n inputs (see quant_dot.h). The max runs on the bits of |x| (for non-negative
// floats the integer order is the float order), so it is exact in any order and vectorises;
// the rounding is the add-and-subtract of 1.5 * 2^23, which rounds |v| <= 127 to the nearest
// integer, ties to even, in the default rounding mode.
inline float quantize_block(const float* x, int64_t n, int8_t* q) {
  uint32_t mb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(x[i]) & 0x7fffffffu;
    mb = b > mb ? b : mb;
  }
  const float d = std::bit_cast<float>(mb) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] * id;
    v = v == v ? v : 0.0f;
    v = v > -127.0f ? v : -127.0f;
    v = v < 127.0f ? v : 127.0f;
    v = (v + 0x1.8p23f) - 0x1.8p23f;
    q[i] = int8_t(int(v));
  }
  return d;
}

inline void quantize_row_any(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                             float* d, int32_t* s) {
  for (int64_t b = 0; b < K / block; ++b)
    d[b] = quantize_block(x + b * block, block, q + b * block);
  for (int64_t b = 0; b < K / sum_block; ++b) {
    int32_t sum = 0;
    for (int64_t i = 0; i < sum_block; ++i) sum += q[b * sum_block + i];
    s[b] = sum;
  }
}

}  // namespace
}  // namespace anchorage::kernels::quant_detail

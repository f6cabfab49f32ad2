// The activation quantizer's operations (quant_dot.h), as the reference loops quantize_row_any
// runs them (the scalar path, quant_dot.cc), and block_scale, the scale formula every build
// shares. quant_act_avx2.cc and quant_act_avx512.cc run the same operations 8 / 16 inputs at a
// time with intrinsics (until kKernelVersion 75 they built these loops at -O3 and left them to
// the compiler, 2-3.6 x slower: docs/kernels.md "Integer dot products"); at M = 1 the
// quantization is serial work on the calling thread of every quantized GEMM. Every step is an
// exactly rounded IEEE operation or an integer one (no contraction: -ffp-contract=off), so every
// build writes the same bytes (tests/kernels/gemm_int8_test.cc
// QuantizeAct.EveryIsaWritesTheSameBytes).
#pragma once

#include <bit>
#include <cstdint>

namespace anchorage::kernels::quant_detail {

// Rows of K inputs: q (K int8), d (K / block scales), s (K / sum_block sums of q). The vector
// builds take act_format's two formats only (block a multiple of 32, sum_block 16 or 32).
void quantize_row_avx2(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                       float* d, int32_t* s);
void quantize_row_avx512(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                         float* d, int32_t* s);

namespace {

// A block's scale d = amax / 127, from the bits of its largest |x| (a NaN's bits above inf's),
// and the inverse its quants are scaled by (0 for a block of zeros): every build's one formula.
inline float block_scale(uint32_t amax_bits, float* id) {
  const float d = std::bit_cast<float>(amax_bits) / 127.0f;
  *id = d != 0.0f ? 1.0f / d : 0.0f;
  return d;
}

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
  float id;
  const float d = block_scale(mb, &id);
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

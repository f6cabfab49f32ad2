// Tests for kernels/quant.h: blocks built by hand decode to the values ggml's layouts define,
// and quantize_row() round trips within each format's error bound.
#include "kernels/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "kernels/kernel_testing.h"

namespace anchorage::kernels {
namespace {

using core::DType;
using testing::bits_of;
using testing::random_floats;

void put_u16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}

// Q8_0: f16 d, then 32 int8. q[i] = 8i - 124 with d = 0.5 gives y[i] = 4i - 62.
TEST(Quant, Q8_0BlockByHand) {
  uint8_t b[34];
  put_u16(b, 0x3800);  // 0.5
  for (int i = 0; i < 32; ++i) b[2 + i] = uint8_t(int8_t(8 * i - 124));
  float y[32];
  dequantize_row(DType::kQ8_0, b, y, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], float(4 * i - 62)) << i;
}

// Q4_K: d = 1, dmin = 0.5; sub-block j has scale sc_j and min m_j; sub-blocks 2i and 2i+1 are
// the low and high nibbles of qs[32i, 32i+32). The 12 scale bytes are written out by hand,
// including 6-bit values whose top 2 bits live in the upper bits of bytes 0-7.
TEST(Quant, Q4_KBlockByHand) {
  const int sc[8] = {1, 2, 3, 63, 5, 40, 7, 9};
  const int m[8] = {0, 2, 4, 6, 8, 10, 50, 63};
  uint8_t b[144] = {};
  put_u16(b, 0x3c00);      // d = 1
  put_u16(b + 2, 0x3800);  // dmin = 0.5
  uint8_t* s = b + 4;
  // j < 4: low 6 bits of s[j] (scale) and s[j+4] (min).
  // j >= 4: s[j+4] = scale low nibble | min low nibble << 4; scale bits 4-5 -> s[j-4] bits
  // 6-7; min bits 4-5 -> s[j] bits 6-7.
  s[0] = 1 | (0 << 6);    // sc0 = 1; sc4 = 5 has no high bits
  s[1] = 2 | (2 << 6);    // sc1 = 2; sc5 = 40 = 0b10'1000: high bits 2
  s[2] = 3 | (0 << 6);    // sc2 = 3; sc6 = 7
  s[3] = 63 | (0 << 6);   // sc3 = 63; sc7 = 9
  s[4] = 0 | (0 << 6);    // m0 = 0; m4 = 8
  s[5] = 2 | (0 << 6);    // m1 = 2; m5 = 10
  s[6] = 4 | (3 << 6);    // m2 = 4; m6 = 50 = 0b11'0010: high bits 3
  s[7] = 6 | (3 << 6);    // m3 = 6; m7 = 63 = 0b11'1111: high bits 3
  s[8] = 5 | (8 << 4);    // sc4 = 5, m4 = 8
  s[9] = 8 | (10 << 4);   // sc5 low nibble 8, m5 = 10
  s[10] = 7 | (2 << 4);   // sc6 = 7, m6 low nibble 2
  s[11] = 9 | (15 << 4);  // sc7 = 9, m7 low nibble 15
  for (int l = 0; l < 128; ++l) b[16 + l] = uint8_t((l % 16) | ((15 - l % 16) << 4));
  float y[256];
  dequantize_row(DType::kQ4_K, b, y, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32, l = e % 32;
    const int q = j % 2 == 0 ? l % 16 : 15 - l % 16;
    EXPECT_EQ(y[e], float(sc[j] * q) - 0.5f * float(m[j])) << e;
  }
}

// Q6_K: ql[128] | qh[64] | int8 scales[16] | f16 d. Only a few quant bits are set; every
// other element has q = 0 - 32. Element e of half h, e = 128h + 32i + l: low 4 bits from
// ql[64h + l + 32(i&1)] (low nibble for i < 2, high for i >= 2), high 2 bits from bits 2i of
// qh[32h + l]; scale sc[8h + (32i + l) / 16].
TEST(Quant, Q6_KBlockByHand) {
  uint8_t b[210] = {};
  b[0] = 0x21;             // e0 low 1, e64 low 2
  b[32] = 0x53;            // e32 low 3, e96 low 5
  b[128] = 0xE4;           // qh[0]: e0 high 0, e32 high 1, e64 high 2, e96 high 3
  b[64 + 5] = 0x0F;        // e133 low 15
  b[128 + 32 + 1] = 0x04;  // qh[33]: e161 (i = 1, l = 1) high 1
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  for (int j = 0; j < 16; ++j) sc[j] = int8_t(j - 8);
  put_u16(b + 208, 0x3400);  // d = 0.25
  float y[256];
  dequantize_row(DType::kQ6_K, b, y, 256);
  auto want = [&](int e, int q) { return 0.25f * float(e / 16 - 8) * float(q - 32); };
  for (int e = 0; e < 256; ++e) {
    int q = 0;
    if (e == 0) q = 1;
    if (e == 64) q = 2 | 2 << 4;
    if (e == 32) q = 3 | 1 << 4;
    if (e == 96) q = 5 | 3 << 4;
    if (e == 133) q = 15;
    if (e == 161) q = 1 << 4;
    EXPECT_EQ(y[e], want(e, q)) << e;
  }
}

TEST(Quant, PlainTypes) {
  const std::vector<float> x = random_floats(64, 3);
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    std::vector<uint8_t> buf(static_cast<size_t>(core::dtype_row_bytes(t, 64)));
    quantize_row(t, x.data(), buf.data(), 64);
    std::vector<float> y(64);
    dequantize_row(t, buf.data(), y.data(), 64);
    for (size_t i = 0; i < 64; ++i) {
      float want = x[i];
      if (t == DType::kBF16) want = core::bf16_to_f32(core::f32_to_bf16(x[i]));
      if (t == DType::kF16) want = core::f16_to_f32(core::f32_to_f16(x[i]));
      EXPECT_EQ(bits_of(y[i]), bits_of(want)) << core::dtype_name(t) << " " << i;
    }
  }
}

float max_abs(const float* x, int n) {
  float a = 0.0f;
  for (int i = 0; i < n; ++i) a = std::fmax(a, std::fabs(x[i]));
  return a;
}

// The largest |x - dequantize(quantize(x))| a block may show, from the format's resolution:
// a super-scale is the ideal one rounded UP to f16 (relative 2^-10, or 2^-24 absolute in the
// subnormal range), sub-block steps are rounded up to a multiple of it, values to the nearest
// step; Q4_K's min is the nearest multiple of dmin.
float f16_up(float v) {
  return v * (1.0f + 0x1.0p-10f) + 0x1.0p-24f;
}

float block_bound(DType t, const float* x) {
  switch (t) {
    case DType::kQ8_0:  // step d = amax / 127
      return 0.5f * f16_up(max_abs(x, 32) / 127.0f);
    case DType::kQ4_K: {  // step <= (hi - lo) / 15 + d, d = max step / 63; min off by dmin / 2
      float max_scale = 0.0f, max_min = 0.0f;
      for (int j = 0; j < 8; ++j) {
        float lo = 0.0f, hi = -INFINITY;
        for (int l = 0; l < 32; ++l) {
          lo = std::fmin(lo, x[32 * j + l]);
          hi = std::fmax(hi, x[32 * j + l]);
        }
        max_scale = std::fmax(max_scale, (hi - lo) / 15.0f);
        max_min = std::fmax(max_min, -lo);
      }
      return 0.5f * (max_scale + f16_up(max_scale / 63.0f)) + 0.5f * f16_up(max_min / 63.0f);
    }
    case DType::kQ6_K: {  // per sub-block of 16: step <= amax / 31 + d, d = max step / 127
      float max_scale = 0.0f;
      for (int j = 0; j < 16; ++j)
        max_scale = std::fmax(max_scale, max_abs(x + 16 * j, 16) / 31.0f);
      return 0.5f * (max_scale + f16_up(max_scale / 127.0f));
    }
    default:
      return 0.0f;
  }
}

// Inputs that stress the scales: normal values, one outlier per block, all-positive and
// all-negative blocks, a zero block and tiny values.
std::vector<float> test_row(int64_t n, uint64_t seed) {
  std::vector<float> x = random_floats(n, seed);
  for (int64_t i = 0; i < n; i += 97) x[size_t(i)] *= 20.0f;
  for (int64_t i = 256; i < 512 && i < n; ++i) x[size_t(i)] = std::fabs(x[size_t(i)]) + 0.5f;
  for (int64_t i = 512; i < 768 && i < n; ++i) x[size_t(i)] = -std::fabs(x[size_t(i)]) - 3.0f;
  for (int64_t i = 768; i < 1024 && i < n; ++i) x[size_t(i)] = 0.0f;
  for (int64_t i = 1024; i < 1280 && i < n; ++i) x[size_t(i)] *= 1e-3f;
  return x;
}

TEST(Quant, RoundTripWithinBound) {
  const int64_t n = 4096;
  const std::vector<float> x = test_row(n, 7);
  for (DType t : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
    std::vector<uint8_t> q(static_cast<size_t>(core::dtype_row_bytes(t, n)));
    quantize_row(t, x.data(), q.data(), n);
    std::vector<float> y(static_cast<size_t>(n));
    dequantize_row(t, q.data(), y.data(), n);
    const int64_t be = core::dtype_block_elements(t);
    double err2 = 0.0, x2 = 0.0;
    for (int64_t b0 = 0; b0 < n; b0 += be) {
      const float bound = block_bound(t, x.data() + b0);
      for (int64_t i = b0; i < b0 + be; ++i) {
        const float e = std::fabs(y[size_t(i)] - x[size_t(i)]);
        EXPECT_LE(e, bound) << core::dtype_name(t) << " element " << i;
        err2 += double(e) * e;
        x2 += double(x[size_t(i)]) * x[size_t(i)];
      }
    }
    const double rel = std::sqrt(err2 / x2);
    // Measured 0.011 / 0.100 / 0.030 (Q8_0 / Q4_K / Q6_K) on this row (outliers included).
    const double limit = t == DType::kQ8_0 ? 0.015 : t == DType::kQ4_K ? 0.13 : 0.04;
    EXPECT_LT(rel, limit) << core::dtype_name(t);
    // The zero block stays exactly zero.
    for (int64_t i = 768; i < 1024; ++i)
      EXPECT_EQ(bits_of(y[size_t(i)]), 0u) << core::dtype_name(t);
  }
}

// A second round trip changes nothing: the dequantized values are exactly representable.
TEST(Quant, RequantizingDequantizedValuesIsStable) {
  const int64_t n = 1024;
  const std::vector<float> x = random_floats(n, 8);
  for (DType t : {DType::kQ8_0, DType::kQ6_K}) {
    std::vector<uint8_t> q(static_cast<size_t>(core::dtype_row_bytes(t, n))), q2(q.size());
    std::vector<float> y(static_cast<size_t>(n)), y2(static_cast<size_t>(n));
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);
    quantize_row(t, y.data(), q2.data(), n);
    dequantize_row(t, q2.data(), y2.data(), n);
    double e1 = 0.0, e2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      e1 += std::fabs(double(y[size_t(i)]) - x[size_t(i)]);
      e2 += std::fabs(double(y2[size_t(i)]) - y[size_t(i)]);
    }
    EXPECT_LT(e2, e1 * 0.05) << core::dtype_name(t);
  }
}

}  // namespace
}  // namespace anchorage::kernels

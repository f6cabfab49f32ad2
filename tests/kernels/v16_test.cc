// Tests for V16 (kernels/simd/v16.h): every operation gives the same bits in the scalar, AVX2
// and AVX-512 builds, and those bits are the IEEE result of the lane operation (checked
// against plain scalar code here), the fold orders of reduce_add / reduce_max included.
// Inputs mix random normals with zeros of both signs, infinities, NaN, subnormals and huge
// values, one lane each, so every op meets them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel_testing.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {
namespace {

using testing::bits_of;
using testing::runnable_isas;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Three operand vectors: random, then specials placed at different lanes in a, b, c.
struct Operands {
  float a[16], b[16], c[16];
};

Operands make_operands(uint64_t seed, bool specials) {
  Operands o;
  const std::vector<float> r = testing::random_floats(48, seed, 3.0);
  for (int i = 0; i < 16; ++i) {
    o.a[i] = r[i];
    o.b[i] = r[16 + i];
    o.c[i] = r[32 + i];
  }
  if (specials) {
    const float sp[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f, -3e-39f, 3e38f, -3e38f, 1.0f};
    for (int i = 0; i < 10; ++i) {
      o.a[i] = sp[i];
      o.b[(i + 3) % 16] = sp[i];
      o.c[(i + 7) % 16] = sp[i];
    }
  }
  return o;
}

std::vector<float> probe(core::Isa isa, V16Op op, const Operands& o, int n = 16) {
  std::vector<float> out(16, -777.0f);
  vector_kernels(isa).test_v16_op(op, o.a, o.b, o.c, n, out.data());
  return out;
}

// NaN lanes compare by NaN-ness: V16 promises the IEEE result, whose NaN payload the
// hardware picks (and std::fma in the scalar build may pick another).
bool same_value_bits(float x, float y) {
  return (std::isnan(x) && std::isnan(y)) || bits_of(x) == bits_of(y);
}

// The scalar meaning of each lane operation.
float expected_lane(V16Op op, float a, float b, float c) {
  switch (op) {
    case V16Op::kAdd:
      return a + b;
    case V16Op::kSub:
      return a - b;
    case V16Op::kMul:
      return a * b;
    case V16Op::kDiv:
      return a / b;
    case V16Op::kFma:
      return std::fma(a, b, c);
    case V16Op::kMax:
      return a > b ? a : b;
    case V16Op::kMin:
      return a < b ? a : b;
    case V16Op::kSqrt:
      return std::sqrt(a);
    case V16Op::kRound:
      return std::nearbyint(a);
    case V16Op::kSelectLt:
      return a < b ? c : a;
    case V16Op::kNeg:
      return -a;
    default:
      return 0.0f;
  }
}

TEST(V16, LaneOpsAreIeeeAndIdenticalInEveryIsa) {
  const V16Op ops[] = {V16Op::kAdd,   V16Op::kSub,      V16Op::kMul, V16Op::kDiv,
                       V16Op::kFma,   V16Op::kMax,      V16Op::kMin, V16Op::kSqrt,
                       V16Op::kRound, V16Op::kSelectLt, V16Op::kNeg};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Operands o = make_operands(seed, seed % 2 == 0);
    for (V16Op op : ops) {
      for (core::Isa isa : runnable_isas()) {
        const std::vector<float> got = probe(isa, op, o);
        for (int i = 0; i < 16; ++i) {
          const float want = expected_lane(op, o.a[i], o.b[i], o.c[i]);
          EXPECT_TRUE(same_value_bits(got[i], want))
              << core::isa_name(isa) << " op " << int(op) << " lane " << i << ": " << got[i]
              << " vs " << want;
        }
      }
    }
  }
}

TEST(V16, NonNanResultsHaveIdenticalBitsAcrossIsas) {
  // Stricter than the lane check for everything but NaN payloads: whole-vector memcmp.
  for (uint64_t seed = 100; seed < 120; ++seed) {
    const Operands o = make_operands(seed, false);
    for (int op = 0; op < int(V16Op::kCount); ++op) {
      if (V16Op(op) == V16Op::kPow2i || V16Op(op) == V16Op::kLoadBf16 ||
          V16Op(op) == V16Op::kLoadBf16Partial) {
        continue;  // need shaped inputs: tested below
      }
      const std::vector<float> base = probe(core::Isa::kScalar, V16Op(op), o, 11);
      for (core::Isa isa : runnable_isas()) {
        EXPECT_TRUE(testing::same_bits(probe(isa, V16Op(op), o, 11), base))
            << core::isa_name(isa) << " op " << op;
      }
    }
  }
}

TEST(V16, Pow2iBuildsExponents) {
  Operands o = make_operands(7, false);
  for (int n = -126; n <= 127; n += 16) {
    for (int i = 0; i < 16; ++i) o.a[i] = float(std::min(n + i, 127));
    for (core::Isa isa : runnable_isas()) {
      const std::vector<float> got = probe(isa, V16Op::kPow2i, o);
      for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], std::ldexp(1.0f, int(o.a[i])));
    }
  }
}

TEST(V16, ReduceAddFoldsEightFourTwoOne) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Operands o = make_operands(seed, false);
    // Magnitudes that make the fold order visible in the rounding.
    for (int i = 0; i < 16; ++i) o.a[i] *= std::ldexp(1.0f, int(seed * 7 + i * 5) % 40 - 20);
    float t[16];
    std::memcpy(t, o.a, sizeof(t));
    for (int w = 8; w >= 1; w /= 2) {
      for (int i = 0; i < w; ++i) t[i] = t[i] + t[i + w];
    }
    for (core::Isa isa : runnable_isas()) {
      EXPECT_EQ(bits_of(probe(isa, V16Op::kReduceAdd, o)[0]), bits_of(t[0])) << core::isa_name(isa);
    }
  }
}

TEST(V16, ReduceMaxIsSequentialIncludingNanAndSignedZeros) {
  Operands o = make_operands(3, false);
  for (int i = 0; i < 16; ++i) o.a[i] = (i % 2 ? -0.0f : 0.0f);
  o.a[5] = kNaN;
  for (core::Isa isa : runnable_isas()) {
    // m starts at lane 0 (+0); -0 > +0 is false and a NaN lane is skipped: +0.
    EXPECT_EQ(bits_of(probe(isa, V16Op::kReduceMax, o)[0]), bits_of(0.0f)) << core::isa_name(isa);
  }
  o.a[0] = -0.0f;
  o.a[1] = 0.0f;
  for (core::Isa isa : runnable_isas()) {
    EXPECT_EQ(bits_of(probe(isa, V16Op::kReduceMax, o)[0]), bits_of(-0.0f)) << core::isa_name(isa);
  }
  o = make_operands(4, false);
  o.a[9] = 50.0f;
  for (core::Isa isa : runnable_isas()) EXPECT_EQ(probe(isa, V16Op::kReduceMax, o)[0], 50.0f);
}

TEST(V16, PartialLoadsAndStoresTouchOnlyTheirLanes) {
  const Operands o = make_operands(9, false);
  for (int n = 0; n <= 16; ++n) {
    for (core::Isa isa : runnable_isas()) {
      const std::vector<float> ld = probe(isa, V16Op::kLoadPartial, o, n);
      const std::vector<float> st = probe(isa, V16Op::kStorePartial, o, n);
      for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(bits_of(ld[i]), bits_of(i < n ? o.a[i] : 0.0f)) << core::isa_name(isa);
        EXPECT_EQ(bits_of(st[i]), bits_of(i < n ? o.a[i] : o.c[i])) << core::isa_name(isa);
      }
    }
  }
}

TEST(V16, Bf16LoadsWiden) {
  Operands o = make_operands(11, true);
  uint16_t h[16];
  for (int i = 0; i < 16; ++i) h[i] = uint16_t(bits_of(o.b[i]) >> 16);
  std::memcpy(o.a, h, sizeof(h));  // the first 32 bytes of a hold the bf16 values
  for (int n = 0; n <= 16; ++n) {
    for (core::Isa isa : runnable_isas()) {
      const std::vector<float> full = probe(isa, V16Op::kLoadBf16, o);
      const std::vector<float> part = probe(isa, V16Op::kLoadBf16Partial, o, n);
      for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(bits_of(full[i]), uint32_t(h[i]) << 16);
        EXPECT_EQ(bits_of(part[i]), i < n ? uint32_t(h[i]) << 16 : 0u);
      }
    }
  }
}

TEST(V16, LaneReadsEachLane) {
  const Operands o = make_operands(13, true);
  for (core::Isa isa : runnable_isas()) {
    const std::vector<float> got = probe(isa, V16Op::kLane, o);
    for (int i = 0; i < 16; ++i) EXPECT_TRUE(same_value_bits(got[i], o.a[i]));
  }
}

}  // namespace
}  // namespace anchorage::kernels

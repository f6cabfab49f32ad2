// Tests for the row norms (kernels/norm.h): against the double reference (kernels/ref/norm_ref.h)
// within a stated tolerance; bit-identical in every ISA, in any batching and thread count, and
// in place; the spec's invariants §7.8 (norm conventions) and §7.9 (L2 norm).
#include "kernels/norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_testing.h"
#include "kernels/ref/norm_ref.h"

namespace anchorage::kernels {
namespace {

using testing::random_floats;
using testing::same_bits;

constexpr float kSentinel = -12345.5f;
constexpr float kEps = 1e-6f;

// Widths off the 16-lane grid, one lane, one block, several blocks.
const int64_t kWidths[] = {1, 3, 15, 16, 17, 31, 33, 100, 128, 129, 512, 600};

// Tolerance against the double reference, relative per element. The kernel rounds: the sum of
// squares (positive terms, lane chains of d/16 fmas then 4 adds: relative error below
// (d/16 + 4)·2^-24, under 2.6e-6 for d = 600), the mean, sqrt, the reciprocal (half of the
// sum's error passes through sqrt) and two or three products, plus silu's 4 ulp for the
// gated form. 4e-6 covers that with margin; an error in the formula is far larger.
constexpr double kRelTol = 4e-6;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what,
                  int64_t d) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i] == kSentinel) {
      ASSERT_EQ(got[i], kSentinel) << what << ": padding written at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], kRelTol * std::fabs(want[i]) + 1e-30)
        << what << " d=" << d << " at " << i;
  }
}

struct Rows {
  int64_t T, d, ldx, ldy;
  std::vector<float> x, w, z;
  Rows(int64_t t, int64_t width, uint64_t seed) : T(t), d(width), ldx(width + 3), ldy(width + 5) {
    x = random_floats(T * ldx, seed, 2.0);
    w = random_floats(d, seed + 1);
    z = random_floats(T * ldx, seed + 2, 3.0);
  }
  std::vector<float> out() const { return std::vector<float>(size_t(T * ldy), kSentinel); }
};

TEST(Norm, RmsNormsMatchReference) {
  uint64_t seed = 1;
  for (int64_t d : kWidths) {
    const Rows r(5, d, seed++);
    std::vector<float> y = r.out(), want = r.out();
    rmsnorm(r.x.data(), r.T, d, r.ldx, r.w.data(), kEps, y.data(), r.ldy);
    rmsnorm_ref(r.x.data(), r.T, d, r.ldx, r.w.data(), kEps, want.data(), r.ldy);
    expect_close(y, want, "rmsnorm", d);
    y = r.out();
    want = r.out();
    rmsnorm_1p(r.x.data(), r.T, d, r.ldx, r.w.data(), kEps, y.data(), r.ldy);
    rmsnorm_1p_ref(r.x.data(), r.T, d, r.ldx, r.w.data(), kEps, want.data(), r.ldy);
    expect_close(y, want, "rmsnorm_1p", d);
  }
}

TEST(Norm, GatedRmsNormMatchesReference) {
  uint64_t seed = 50;
  for (int64_t d : kWidths) {
    const int64_t heads = 3;
    const Rows r(4, heads * d, seed++);
    const std::vector<float> w = random_floats(d, seed++);
    std::vector<float> y = r.out(), want = r.out();
    gated_rmsnorm(r.x.data(), r.ldx, r.z.data(), r.ldx, r.T, heads, d, w.data(), kEps, y.data(),
                  r.ldy);
    gated_rmsnorm_ref(r.x.data(), r.ldx, r.z.data(), r.ldx, r.T, heads, d, w.data(), kEps,
                      want.data(), r.ldy);
    expect_close(y, want, "gated_rmsnorm", d);
  }
}

TEST(Norm, L2NormHeadsMatchesReference) {
  uint64_t seed = 90;
  for (int64_t d : kWidths) {
    const int64_t heads = 3;
    const Rows r(4, heads * d, seed++);
    const float scale = 1.0f / std::sqrt(float(d));
    std::vector<float> y = r.x, want = r.x;
    l2norm_heads(y.data(), r.T, heads, d, r.ldx, kEps, scale);
    l2norm_heads_ref(want.data(), r.T, heads, d, r.ldx, kEps, scale);
    expect_close(y, want, "l2norm_heads", d);
  }
}

TEST(Norm, EveryIsaGivesTheSameBits) {
  uint64_t seed = 200;
  for (int64_t d : kWidths) {
    const Rows r(6, 2 * d, seed++);
    testing::expect_same_bits_every_isa([&] {
      std::vector<float> a = r.out(), b = r.out(), c = r.out(), e = r.x;
      rmsnorm(r.x.data(), r.T, 2 * d, r.ldx, r.w.data(), kEps, a.data(), r.ldy);
      rmsnorm_1p(r.x.data(), r.T, 2 * d, r.ldx, r.w.data(), kEps, b.data(), r.ldy);
      gated_rmsnorm(r.x.data(), r.ldx, r.z.data(), r.ldx, r.T, 2, d, r.w.data(), kEps, c.data(),
                    r.ldy);
      l2norm_heads(e.data(), r.T, 2, d, r.ldx, kEps, 0.25f);
      a.insert(a.end(), b.begin(), b.end());
      a.insert(a.end(), c.begin(), c.end());
      a.insert(a.end(), e.begin(), e.end());
      return a;
    });
  }
}

TEST(Norm, RowsIndependentOfBatchAndThreads) {
  testing::IsaScope scope;
  const int64_t N = 1030, heads = 2, hd = 50, d = heads * hd;
  const Rows r(N, d, 7);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    const auto fresh = [&] { return r.out(); };
    testing::expect_batch_invariant(N, fresh, [&](std::vector<float>& y, int64_t r0, int64_t n) {
      rmsnorm(r.x.data() + r0 * r.ldx, n, d, r.ldx, r.w.data(), kEps, y.data() + r0 * r.ldy, r.ldy);
    });
    testing::expect_batch_invariant(N, fresh, [&](std::vector<float>& y, int64_t r0, int64_t n) {
      rmsnorm_1p(r.x.data() + r0 * r.ldx, n, d, r.ldx, r.w.data(), kEps, y.data() + r0 * r.ldy,
                 r.ldy);
    });
    testing::expect_batch_invariant(N, fresh, [&](std::vector<float>& y, int64_t r0, int64_t n) {
      gated_rmsnorm(r.x.data() + r0 * r.ldx, r.ldx, r.z.data() + r0 * r.ldx, r.ldx, n, heads, hd,
                    r.w.data(), kEps, y.data() + r0 * r.ldy, r.ldy);
    });
    testing::expect_batch_invariant(
        N, [&] { return r.x; },
        [&](std::vector<float>& y, int64_t r0, int64_t n) {
          l2norm_heads(y.data() + r0 * r.ldx, n, heads, hd, r.ldx, kEps, 0.1f);
        });
  }
}

TEST(Norm, InPlaceEqualsOutOfPlace) {
  const Rows r(9, 77, 11);
  std::vector<float> y(r.x.size(), kSentinel);
  rmsnorm(r.x.data(), r.T, r.d, r.ldx, r.w.data(), kEps, y.data(), r.ldx);
  std::vector<float> x = r.x;
  rmsnorm(x.data(), r.T, r.d, r.ldx, r.w.data(), kEps, x.data(), r.ldx);
  for (int64_t t = 0; t < r.T; ++t) {
    for (int64_t i = 0; i < r.d; ++i) {
      ASSERT_EQ(testing::bits_of(x[t * r.ldx + i]), testing::bits_of(y[t * r.ldx + i]));
    }
  }
}

// §7.8: an HF weight w applied with RMSNorm1p equals the GGUF weight w + 1 applied plain, and
// here bit for bit (the kernel forms 1 + w in fp32 exactly as the loader would).
TEST(Norm, OnePlusEqualsPlainWithOffsetWeight) {
  const Rows r(8, 300, 21);
  std::vector<float> w1(r.w.size());
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 1.0f + r.w[i];
  std::vector<float> a = r.out(), b = r.out();
  rmsnorm_1p(r.x.data(), r.T, r.d, r.ldx, r.w.data(), kEps, a.data(), r.ldy);
  rmsnorm(r.x.data(), r.T, r.d, r.ldx, w1.data(), kEps, b.data(), r.ldy);
  EXPECT_TRUE(same_bits(a, b));
  // And the plain norm with w itself is a different function (so the test can fail).
  rmsnorm(r.x.data(), r.T, r.d, r.ldx, r.w.data(), kEps, b.data(), r.ldy);
  EXPECT_FALSE(same_bits(a, b));
}

// §7.9: unit length within 1e-6 for ordinary vectors; a zero vector stays zero (no NaN).
TEST(Norm, L2NormUnitLengthAndZero) {
  const int64_t heads = 4, d = 128;
  std::vector<float> x = random_floats(heads * d, 31, 0.7);
  for (int64_t i = 0; i < d; ++i) x[size_t(2 * d + i)] = 0.0f;  // head 2 all zeros
  l2norm_heads(x.data(), 1, heads, d, heads * d, kEps, 1.0f);
  for (int64_t h = 0; h < heads; ++h) {
    double s = 0.0;
    for (int64_t i = 0; i < d; ++i) s += double(x[size_t(h * d + i)]) * x[size_t(h * d + i)];
    if (h == 2) {
      for (int64_t i = 0; i < d; ++i) ASSERT_EQ(testing::bits_of(x[size_t(h * d + i)]), 0u);
    } else {
      EXPECT_NEAR(std::sqrt(s), 1.0, 1e-6) << "head " << h;
    }
  }
}

}  // namespace
}  // namespace anchorage::kernels

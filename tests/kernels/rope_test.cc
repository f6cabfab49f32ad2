// Tests for the partial NeoX RoPE (kernels/rope.h): against the reference (kernels/ref/rope_ref.h)
// within a stated tolerance; bit-identical in every ISA and however the tokens are batched; and
// the spec's invariants §7.11: dims R..D-1 unchanged, position 0 is the identity, the pairs are
// (i, i + R/2), and the score between a rotated query and key depends only on p - p'.
#include "kernels/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_testing.h"
#include "kernels/ref/rope_ref.h"

namespace anchorage::kernels {
namespace {

using testing::bits_of;
using testing::random_floats;
using testing::same_bits;

constexpr float kTheta = 1e7f;  // Qwen3.5 (docs/model.md §1.4)

struct Shape {
  int64_t n_heads, D, R;
};
// R/2 below, at and across the 16-lane blocks; the release shape (256, 64) last.
const Shape kShapes[] = {{1, 4, 2},   {2, 16, 8},  {3, 40, 34},
                         {2, 64, 64}, {1, 96, 66}, {4, 256, 64}};

// Each rotated element is a·c - b·s (or b·c + a·s) with c, s from cosf/sinf (within 1 ulp of the
// fp32 angle's cos and sin): product and sum roundings plus those ulps stay below
// 3·2^-23·(|a| + |b|). Relative to the pair, since a·c - b·s may cancel.
TEST(Rope, MatchesReference) {
  uint64_t seed = 1;
  for (const Shape& s : kShapes) {
    for (int64_t pos0 : {0, 1, 1000, 100000}) {
      const int64_t T = 5, ldx = s.n_heads * s.D + 3;
      const std::vector<float> x0 = random_floats(T * ldx, seed++);
      std::vector<float> x = x0, want = x0;
      rope_neox(x.data(), T, ldx, s.n_heads, s.D, s.R, pos0, kTheta);
      rope_neox_ref(want.data(), T, ldx, s.n_heads, s.D, s.R, pos0, kTheta);
      const int64_t half = s.R / 2;
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < s.n_heads; ++h) {
          const int64_t base = t * ldx + h * s.D;
          for (int64_t i = 0; i < half; ++i) {
            const double pair =
                std::fabs(x0[size_t(base + i)]) + std::fabs(x0[size_t(base + i + half)]);
            for (int64_t e : {i, i + half}) {
              ASSERT_NEAR(x[size_t(base + e)], want[size_t(base + e)], 3.6e-7 * pair)
                  << "D=" << s.D << " R=" << s.R << " p=" << pos0 + t << " e=" << e;
            }
          }
        }
      }
    }
  }
}

TEST(Rope, DimsBeyondRUnchangedAndPaddingUntouched) {
  const Shape s = kShapes[5];
  const int64_t T = 7, ldx = s.n_heads * s.D + 9;
  const std::vector<float> x0 = random_floats(T * ldx, 5);
  std::vector<float> x = x0;
  rope_neox(x.data(), T, ldx, s.n_heads, s.D, s.R, 123, kTheta);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t e = 0; e < ldx; ++e) {
      const bool rotated = e < s.n_heads * s.D && e % s.D < s.R;
      const size_t at = size_t(t * ldx + e);
      if (!rotated) {
        ASSERT_EQ(bits_of(x[at]), bits_of(x0[at])) << e;
      }
    }
  }
  EXPECT_FALSE(same_bits(x, x0));
}

TEST(Rope, PositionZeroIsIdentity) {
  for (const Shape& s : kShapes) {
    const std::vector<float> x0 = random_floats(s.n_heads * s.D, 8);
    std::vector<float> x = x0;
    rope_neox(x.data(), 1, s.n_heads * s.D, s.n_heads, s.D, s.R, 0, kTheta);
    EXPECT_TRUE(same_bits(x, x0)) << s.D;
  }
}

// A unit vector on dim i < R/2 at position p becomes cos φ_i on i and sin φ_i on i + R/2 and
// nothing else (NeoX pairs, not GPT-J's (2i, 2i+1)), with φ_i = p · theta^(-2i/R) in fp32.
TEST(Rope, PairsAreIAndIPlusHalf) {
  const int64_t D = 256, R = 64, half = R / 2, p = 777;
  for (int64_t i = 0; i < half; ++i) {
    std::vector<float> x(size_t(D), 0.0f);
    x[size_t(i)] = 1.0f;
    rope_neox(x.data(), 1, D, 1, D, R, p, kTheta);
    const float inv_freq = 1.0f / std::pow(kTheta, float(2 * i) / float(R));
    const float phi = float(p) * inv_freq;
    for (int64_t e = 0; e < D; ++e) {
      if (e == i || e == i + half) {
        const float want = e == i ? std::cos(phi) : std::sin(phi);
        ASSERT_EQ(bits_of(x[size_t(e)]), bits_of(want)) << "i=" << i << " e=" << e;
      } else {
        ASSERT_EQ(x[size_t(e)], 0.0f) << "i=" << i << " e=" << e;  // either signed zero
      }
    }
  }
}

// score(p, p') = RoPE(q, p) · RoPE(k, p'), in double from the fp32 outputs. Rotations compose,
// so it depends on p - p' only; the fp32 angle p·inv_freq is off by up to p·2^-24 radians,
// so shifting both positions by up to P moves the score by at most about
// 2·(p + P)·2^-24 · |q_R||k_R| (q_R, k_R: the rotated dims). The tolerance is that bound.
TEST(Rope, ScoreDependsOnlyOnRelativePosition) {
  const int64_t D = 256, R = 64;
  const std::vector<float> q = random_floats(D, 11), k = random_floats(D, 12);
  double qn = 0.0, kn = 0.0;
  for (int64_t i = 0; i < R; ++i) {
    qn += double(q[size_t(i)]) * q[size_t(i)];
    kn += double(k[size_t(i)]) * k[size_t(i)];
  }
  const double qk = std::sqrt(qn * kn);
  const auto score = [&](int64_t p, int64_t pk) {
    std::vector<float> a = q, b = k;
    rope_neox(a.data(), 1, D, 1, D, R, p, kTheta);
    rope_neox(b.data(), 1, D, 1, D, R, pk, kTheta);
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += double(a[size_t(i)]) * b[size_t(i)];
    return s;
  };
  for (int64_t p : {5, 40, 300}) {
    for (int64_t pk : {0, 3, 17, 299}) {
      if (pk > p) continue;
      const double base = score(p, pk);
      for (int64_t shift : {1, 7, 64, 1000, 4000}) {
        const double tol = 2.0 * double(p + shift) * std::ldexp(1.0, -24) * qk + 1e-6 * qk;
        EXPECT_NEAR(score(p + shift, pk + shift), base, tol)
            << "p=" << p << " p'=" << pk << " shift=" << shift;
      }
    }
  }
  // The score does change with p - p' (so the check above can fail).
  EXPECT_GT(std::fabs(score(10, 0) - score(10, 9)), 1e-3 * qk);
}

TEST(Rope, EveryIsaGivesTheSameBits) {
  for (const Shape& s : kShapes) {
    const int64_t T = 9, ldx = s.n_heads * s.D + 1;
    const std::vector<float> x0 = random_floats(T * ldx, 21);
    testing::expect_same_bits_every_isa([&] {
      std::vector<float> x = x0;
      rope_neox(x.data(), T, ldx, s.n_heads, s.D, s.R, 4321, kTheta);
      return x;
    });
  }
}

// Token t of a call starting at pos0 is at pos0 + t: any batching gives the same bits.
TEST(Rope, RowsIndependentOfBatchAndThreads) {
  testing::IsaScope scope;
  const int64_t N = 1030, heads = 3, D = 96, R = 66, ldx = heads * D + 4, pos0 = 17;
  const std::vector<float> x0 = random_floats(N * ldx, 31);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    testing::expect_batch_invariant(
        N, [&] { return x0; },
        [&](std::vector<float>& x, int64_t r0, int64_t n) {
          rope_neox(x.data() + r0 * ldx, n, ldx, heads, D, R, pos0 + r0, kTheta);
        });
  }
}

}  // namespace
}  // namespace anchorage::kernels

// Tests for the element-wise kernels (kernels/activation.h: swiglu, mul_sigmoid, add): against
// the double reference within a stated tolerance (add exactly); bit-identical in every ISA, in
// any batching and thread count, and in place. The exp, sigmoid, silu and softplus scalars are
// in exp_test.cc.
#include "kernels/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_testing.h"
#include "kernels/ref/activation_ref.h"

namespace anchorage::kernels {
namespace {

using testing::random_floats;
using testing::same_bits;

const int64_t kLengths[] = {1, 2, 15, 16, 17, 33, 100, 1000, 1536};

// silu(g)·u and x·sigmoid(g): exp's 1 ulp, the 1 + e and division roundings, the product:
// within 5 ulp of the double value, 6e-7 relative.
constexpr double kRelTol = 6e-7;

TEST(Activation, SwigluMatchesReference) {
  uint64_t seed = 1;
  for (int64_t n : kLengths) {
    const std::vector<float> g = random_floats(n, seed++, 4.0), u = random_floats(n, seed++);
    std::vector<float> y(size_t(n + 3), 7.0f), want(size_t(n + 3), 7.0f);
    swiglu(g.data(), u.data(), n, y.data());
    swiglu_ref(g.data(), u.data(), n, want.data());
    for (int64_t i = 0; i < n + 3; ++i) {
      ASSERT_NEAR(y[size_t(i)], want[size_t(i)], kRelTol * std::fabs(want[size_t(i)]))
          << "n=" << n << " i=" << i;
    }
  }
}

TEST(Activation, MulSigmoidMatchesReference) {
  uint64_t seed = 10;
  for (int64_t n : kLengths) {
    const int64_t T = 3, ldx = n + 2, ldg = n + 5;
    std::vector<float> x = random_floats(T * ldx, seed++), want = x;
    const std::vector<float> g = random_floats(T * ldg, seed++, 4.0);
    mul_sigmoid(x.data(), ldx, g.data(), ldg, T, n);
    mul_sigmoid_ref(want.data(), ldx, g.data(), ldg, T, n);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(x[i], want[i], kRelTol * std::fabs(want[i])) << "n=" << n << " i=" << i;
    }
  }
}

// A float sum is correctly rounded: the kernel must equal the reference bit for bit.
TEST(Activation, AddIsExact) {
  uint64_t seed = 20;
  for (int64_t n : kLengths) {
    const std::vector<float> x = random_floats(n, seed++), r = random_floats(n, seed++, 1e-3);
    std::vector<float> y(size_t(n + 1), 3.0f), want(size_t(n + 1), 3.0f);
    add(x.data(), r.data(), n, y.data());
    add_ref(x.data(), r.data(), n, want.data());
    EXPECT_TRUE(same_bits(y, want)) << n;
  }
}

TEST(Activation, EveryIsaGivesTheSameBits) {
  uint64_t seed = 40;
  for (int64_t n : kLengths) {
    const std::vector<float> a = random_floats(n, seed++, 6.0), b = random_floats(n, seed++);
    testing::expect_same_bits_every_isa([&] {
      std::vector<float> s(static_cast<size_t>(n)), m = b, p(static_cast<size_t>(n));
      swiglu(a.data(), b.data(), n, s.data());
      mul_sigmoid(m.data(), n, a.data(), n, 1, n);
      add(a.data(), b.data(), n, p.data());
      s.insert(s.end(), m.begin(), m.end());
      s.insert(s.end(), p.begin(), p.end());
      return s;
    });
  }
}

TEST(Activation, RowsIndependentOfBatchAndThreads) {
  testing::IsaScope scope;
  const int64_t N = 1030, n = 90, ld = 96;
  const std::vector<float> x = random_floats(N * ld, 3), g = random_floats(N * ld, 4, 5.0);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    testing::expect_batch_invariant(
        N, [&] { return x; },
        [&](std::vector<float>& y, int64_t r0, int64_t rows) {
          mul_sigmoid(y.data() + r0 * ld, ld, g.data() + r0 * ld, ld, rows, n);
        });
    // swiglu and add take flat vectors: a batch is a run of rows of n = 90 floats, so batch
    // starts fall inside 16-lane blocks.
    testing::expect_batch_invariant(
        N, [&] { return std::vector<float>(x.size(), 0.0f); },
        [&](std::vector<float>& y, int64_t r0, int64_t rows) {
          swiglu(g.data() + r0 * n, x.data() + r0 * n, rows * n, y.data() + r0 * n);
        });
    testing::expect_batch_invariant(
        N, [&] { return std::vector<float>(x.size(), 0.0f); },
        [&](std::vector<float>& y, int64_t r0, int64_t rows) {
          add(g.data() + r0 * n, x.data() + r0 * n, rows * n, y.data() + r0 * n);
        });
  }
}

TEST(Activation, InPlaceAliasing) {
  const int64_t n = 77;
  const std::vector<float> g = random_floats(n, 5, 3.0), u = random_floats(n, 6);
  std::vector<float> want(static_cast<size_t>(n));
  swiglu(g.data(), u.data(), n, want.data());
  std::vector<float> a = g, b = u;
  swiglu(a.data(), u.data(), n, a.data());  // out aliases gate
  swiglu(g.data(), b.data(), n, b.data());  // out aliases up
  EXPECT_TRUE(same_bits(a, want));
  EXPECT_TRUE(same_bits(b, want));
  std::vector<float> s(static_cast<size_t>(n)), x = g;
  add(g.data(), u.data(), n, s.data());
  add(x.data(), u.data(), n, x.data());
  EXPECT_TRUE(same_bits(x, s));
}

}  // namespace
}  // namespace anchorage::kernels

// Tests for the project's exp (kernels/exp_impl.h) and the scalar activations of
// kernels/activation.h: accuracy against exp in double, the range edges, NaN, and the promise
// that the scalar functions give the bits of the vector lanes in every ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_testing.h"
#include "kernels/activation.h"
#include "kernels/ref/activation_ref.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {
namespace {

using testing::bits_of;
using testing::runnable_isas;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The error of y in units in the last place of the float nearest to the exact e (normal e).
double ulp_error(float y, double e) {
  const double ulp = std::ldexp(1.0, std::ilogb(float(e)) - 23);
  return std::fabs(double(y) - e) / ulp;
}

// Evenly spaced points over [lo, hi] plus the float neighbours of 0 and of the range edges.
std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> x;
  for (int i = 0; i <= n; ++i) x.push_back(float(lo + (double(hi) - lo) * i / n));
  for (float c : {0.0f, 88.7f, -87.3f, 1e-8f, -1e-8f, 0.34657359f, -0.34657359f}) {
    float u = c, d = c;
    for (int i = 0; i < 64; ++i) {
      x.push_back(u);
      x.push_back(d);
      u = std::nextafter(u, kInf);
      d = std::nextafter(d, -kInf);
    }
  }
  return x;
}

// Rel error of a correctly implemented exp is at most ~1 ulp (Taylor degree 7 on |r| <= 0.35
// truncates at 7e-9 relative, plus the Horner roundings); the brief allows 2.
TEST(Exp, WithinTwoUlpOfDoubleExp) {
  const std::vector<float> x = sweep(-87.3f, 88.7f, 1 << 20);
  std::vector<float> y(x.size());
  vector_kernels().exp(x.data(), int64_t(x.size()), y.data());
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] < -87.3f || x[i] > 88.7f) continue;
    worst = std::fmax(worst, ulp_error(y[i], exp_ref(x[i])));
  }
  EXPECT_LE(worst, 2.0);
  RecordProperty("max_ulp_x1000", int(worst * 1000));
  std::printf("exp: max error %.3f ulp over %zu points\n", worst, x.size());
}

TEST(Exp, RangeEdgesAndSpecials) {
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-0.0f), 1.0f);
  EXPECT_TRUE(std::isfinite(exp_f32(88.7f)));
  EXPECT_GT(exp_f32(88.7f), 3.0e38f);
  EXPECT_EQ(exp_f32(std::nextafter(88.7f, kInf)), kInf);
  EXPECT_EQ(exp_f32(1000.0f), kInf);
  EXPECT_EQ(exp_f32(kInf), kInf);
  // Every result in range is a normal number; below -87.3 the result is +0.
  EXPECT_GE(exp_f32(-87.3f), std::numeric_limits<float>::min());
  EXPECT_EQ(bits_of(exp_f32(std::nextafter(-87.3f, -kInf))), 0u);
  EXPECT_EQ(bits_of(exp_f32(-kInf)), 0u);
  EXPECT_TRUE(std::isnan(exp_f32(kNaN)));
  EXPECT_TRUE(std::isnan(exp_f32(-kNaN)));
  // exp(1) within an ulp of e.
  EXPECT_LE(ulp_error(exp_f32(1.0f), std::exp(1.0)), 1.0);
}

// The scalar functions run the vector sequence on one lane: same bits as every ISA's lanes,
// over the whole float range that matters and the specials.
TEST(Exp, ScalarEqualsVectorLanesInEveryIsa) {
  std::vector<float> x = sweep(-100.0f, 100.0f, 1 << 18);
  const std::vector<float> r = testing::random_floats(1 << 16, 3, 30.0);
  x.insert(x.end(), r.begin(), r.end());
  for (float s : {kInf, -kInf, kNaN, 0.0f, -0.0f, 1e-45f, -1e-45f, 3e38f, -3e38f}) x.push_back(s);
  while (x.size() % 16) x.push_back(0.5f);
  std::vector<float> scalar_exp(x.size()), scalar_sig(x.size()), scalar_silu(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    scalar_exp[i] = exp_f32(x[i]);
    scalar_sig[i] = sigmoid(x[i]);
    scalar_silu[i] = silu(x[i]);
  }
  for (core::Isa isa : runnable_isas()) {
    const VectorKernelTable& kt = vector_kernels(isa);
    std::vector<float> y(x.size()), sig(x.size()), sl(x.size());
    kt.exp(x.data(), int64_t(x.size()), y.data());
    for (size_t i = 0; i < x.size(); i += 16) {
      kt.test_v16_op(V16Op::kSigmoid, &x[i], &x[i], &x[i], 16, &sig[i]);
      kt.test_v16_op(V16Op::kSilu, &x[i], &x[i], &x[i], 16, &sl[i]);
    }
    for (size_t i = 0; i < x.size(); ++i) {
      const bool nan = std::isnan(x[i]);  // NaN in, NaN out; payload not promised
      ASSERT_TRUE(nan ? std::isnan(y[i]) : bits_of(y[i]) == bits_of(scalar_exp[i]))
          << core::isa_name(isa) << " exp(" << x[i] << ")";
      ASSERT_TRUE(nan ? std::isnan(sig[i]) : bits_of(sig[i]) == bits_of(scalar_sig[i]))
          << core::isa_name(isa) << " sigmoid(" << x[i] << ")";
      ASSERT_TRUE(nan ? std::isnan(sl[i]) : bits_of(sl[i]) == bits_of(scalar_silu[i]))
          << core::isa_name(isa) << " silu(" << x[i] << ")";
    }
  }
}

// sigmoid = 1 / (1 + e), silu = x / (1 + e): exp's 1 ulp plus two roundings, so 4 ulp
// (4.8e-7 relative); the absolute floor covers outputs that underflow (sigmoid(-88) is
// below the normal range, the kernel's exp then saturates).
TEST(Exp, SigmoidAndSiluMatchDoubleReference) {
  const std::vector<float> x = sweep(-100.0f, 100.0f, 1 << 16);
  for (float v : x) {
    const double s = sigmoid_ref(v);
    EXPECT_NEAR(sigmoid(v), s, 4.8e-7 * s + 1e-37) << v;
    const double l = silu_ref(v);
    EXPECT_NEAR(silu(v), l, 4.8e-7 * std::fabs(l) + 1e-36) << v;
  }
  EXPECT_EQ(sigmoid(0.0f), 0.5f);
  EXPECT_EQ(sigmoid(200.0f), 1.0f);
  EXPECT_EQ(sigmoid(-200.0f), 0.0f);
  EXPECT_EQ(silu(0.0f), 0.0f);
}

// softplus(x) = x for x > 20 (PyTorch's threshold), log1p(exp(x)) otherwise. At the threshold
// the two branches differ by log1p(e^-20) ≈ 2e-9, below half an ulp of 20, so the switch is
// invisible; but it is there: just above 20 the result is x itself, bit for bit.
TEST(Exp, SoftplusThreshold) {
  const float above = std::nextafter(20.0f, kInf);
  EXPECT_EQ(bits_of(softplus(above)), bits_of(above));
  EXPECT_EQ(bits_of(softplus(25.5f)), bits_of(25.5f));
  EXPECT_EQ(bits_of(softplus(1e30f)), bits_of(1e30f));
  EXPECT_EQ(bits_of(softplus(20.0f)), bits_of(std::log1p(exp_f32(20.0f))));
  EXPECT_NEAR(softplus(20.0f), 20.0, 2e-6);
  // Below: log1p(exp(x)) within 4 ulp relative (exp's ulp plus log1pf's); below -87.3 exp
  // and so softplus are +0 (the floor: exp(-87.3) = 1.22e-38).
  for (float v : sweep(-100.0f, 20.0f, 1 << 14)) {
    const double r = softplus_ref(v);
    EXPECT_NEAR(softplus(v), r, 4.8e-7 * r + 1.25e-38) << v;
  }
  EXPECT_TRUE(std::isnan(softplus(kNaN)));
}

}  // namespace
}  // namespace anchorage::kernels

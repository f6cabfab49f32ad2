// engine::vocab_exp_sum: the documented order bit for bit (the vector exp, 16 lanes in order,
// then the lanes in order), whether it keeps the weights or not, across its chunk boundaries;
// engine::vocab_counts_at_least: the plain count.
#include "engine/vocab_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "kernels/activation.h"

namespace anchorage::engine {
namespace {

TEST(VocabExp, OneFixedOrderWithOrWithoutTheWeights) {
  for (const size_t n : {1, 15, 16, 17, 4095, 4096, 4097, 12301, 151936}) {
    core::Rng rng(n);
    std::vector<float> x(n);
    for (float& v : x) v = float(rng.normal() * 4.0);
    const float max_logit = 3.25f, inv_t = 1.25f;
    // The definition written out again, over the whole row at once.
    std::vector<float> want_w(n);
    for (size_t i = 0; i < n; ++i) want_w[i] = (x[i] - max_logit) * inv_t;
    kernels::exp_row(want_w.data(), int64_t(n), want_w.data());
    VocabLanes want_lanes{};
    for (size_t i = 0; i < n; ++i) want_lanes[i % 16] += double(want_w[i]);
    double want = 0.0;
    for (const double s : want_lanes) want += s;

    std::vector<float> w(n);
    VocabLanes lanes{};
    const double kept = vocab_exp_sum(x, max_logit, inv_t, w.data(), &lanes);
    const double plain = vocab_exp_sum(x, max_logit, inv_t, nullptr, nullptr);
    EXPECT_EQ(std::memcmp(&kept, &want, sizeof want), 0) << n;
    EXPECT_EQ(std::memcmp(&plain, &want, sizeof want), 0) << n;
    EXPECT_EQ(std::memcmp(w.data(), want_w.data(), n * sizeof(float)), 0) << n;
    EXPECT_EQ(std::memcmp(lanes.data(), want_lanes.data(), sizeof lanes), 0) << n;
  }
}

// vocab_counts_at_least against the plain count, on every tail length around its groups of 8,
// with NaNs (never counted) and thresholds equal to logits (counted: >=).
TEST(VocabExp, CountsAtLeastFourThresholdsAsThePlainLoop) {
  for (const size_t n : {1, 7, 8, 9, 63, 151936}) {
    core::Rng rng(n + 1);
    std::vector<float> x(n);
    for (float& v : x) v = float(rng.normal() * 4.0);
    x[n / 2] = std::nanf("");
    const float t[4] = {x[0], 0.0f, -3.5f, -1e30f};
    int64_t got[4];
    vocab_counts_at_least(x, t, got);
    for (int j = 0; j < 4; ++j) {
      int64_t want = 0;
      for (const float v : x) want += v >= t[j];
      EXPECT_EQ(got[j], want) << n << " " << j;
    }
  }
}

}  // namespace
}  // namespace anchorage::engine

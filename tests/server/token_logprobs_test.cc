// fill_token_logprobs: the documented fixed-order log-softmax bit for bit, top-k order and
// ties, and the shortest round-trip printing of the values.
#include "server/token_logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "kernels/activation.h"
#include "server/openai_json.h"

namespace anchorage::server {
namespace {

std::vector<float> random_logits(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = float(rng.normal() * 3.0);
  return v;
}

// The definition in token_logprobs.h, written out again: the maximum by a plain loop, the
// vector exp of x - max, its sum in 16 lanes (element i in lane i % 16, in order), the lanes in
// order.
float reference_logprob(const std::vector<float>& x, size_t i) {
  float m = x[0];
  for (float v : x) m = std::max(m, v);
  std::vector<float> w(x.size());
  for (size_t j = 0; j < x.size(); ++j) w[j] = x[j] - m;
  kernels::exp_row(w.data(), int64_t(w.size()), w.data());
  double lanes[16] = {};
  for (size_t j = 0; j < w.size(); ++j) lanes[j % 16] += double(w[j]);
  double s = 0.0;
  for (const double l : lanes) s += l;
  return float(double(x[i]) - (double(m) + std::log(s)));
}

TEST(TokenLogprobs, MatchesTheDefinitionBitForBit) {
  const auto logits = random_logits(5000, 1);
  for (int32_t token : {0, 17, 4999}) {
    TokenEvent e;
    e.token = token;
    fill_token_logprobs(logits, 0, &e);
    const float want = reference_logprob(logits, size_t(token));
    EXPECT_EQ(std::memcmp(&e.logprob, &want, sizeof(float)), 0) << token;
    EXPECT_TRUE(e.top.empty());
  }
}

TEST(TokenLogprobs, TopAlternativesLargestFirstTiesToLowerId) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 2.0f};
  TokenEvent e;
  e.token = 4;
  fill_token_logprobs(logits, 4, &e);
  ASSERT_EQ(e.top.size(), 4u);
  EXPECT_EQ(e.top[0].first, 1);
  EXPECT_EQ(e.top[1].first, 3);
  EXPECT_EQ(e.top[2].first, 2);
  EXPECT_EQ(e.top[3].first, 5);
  for (const auto& [id, lp] : e.top) {
    const float want = reference_logprob(logits, size_t(id));
    EXPECT_EQ(std::memcmp(&lp, &want, sizeof(float)), 0);
  }
  // More alternatives than ids: all of them.
  fill_token_logprobs(logits, 20, &e);
  EXPECT_EQ(e.top.size(), logits.size());
  // Probabilities sum to one (a sanity check of the normalisation, not of the bits).
  double total = 0;
  for (const auto& t : e.top) total += std::exp(double(t.second));
  EXPECT_NEAR(total, 1.0, 1e-6);
}

// Over a whole vocabulary with many ties and NaNs (after the first 20 ids): the 20 largest,
// ties to the lower id, NaNs never, as a full sort gives them.
TEST(TokenLogprobs, TopAlternativesOverAWholeVocabularyWithTiesAndNaNs) {
  std::vector<float> logits = random_logits(151936, 3);
  for (float& x : logits) x = std::round(x * 2.0f) / 2.0f;  // many equal values
  for (size_t i : {size_t(100), size_t(4097), size_t(151935)}) logits[i] = std::nanf("");
  logits[77777] = 40.0f;
  logits[151934] = 40.0f;  // a tie at the top, far apart
  std::vector<int32_t> ids;
  for (size_t i = 0; i < logits.size(); ++i)
    if (!std::isnan(logits[i])) ids.push_back(int32_t(i));
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return logits[size_t(a)] > logits[size_t(b)]; });
  TokenEvent e;
  e.token = 5;
  fill_token_logprobs(logits, 20, &e);
  ASSERT_EQ(e.top.size(), 20u);
  for (size_t k = 0; k < 20; ++k) EXPECT_EQ(e.top[k].first, ids[k]) << k;
  EXPECT_EQ(e.top[0].first, 77777);
  EXPECT_EQ(e.top[1].first, 151934);
}

TEST(TokenLogprobs, JsonNumbersRoundTripToTheSameFloat) {
  const auto logits = random_logits(20000, 2);
  for (size_t i = 0; i < logits.size(); ++i) {
    TokenEvent e;
    e.token = int32_t(i);
    fill_token_logprobs(logits, 0, &e);
    const std::string text = dump_json(logprob_number(e.logprob));
    EXPECT_LE(text.size(), 16u) << text;  // shortest form, not 17 double digits
    const float back = float(std::strtod(text.c_str(), nullptr));
    ASSERT_EQ(std::memcmp(&back, &e.logprob, sizeof(float)), 0) << text;
  }
  for (float f : {0.0f, -0.0f, -1e-30f, -87.3365f, -1.17549435e-38f, -3.4028235e38f}) {
    const std::string text = dump_json(logprob_number(f));
    const float back = float(std::strtod(text.c_str(), nullptr));
    EXPECT_EQ(std::memcmp(&back, &f, sizeof(float)), 0) << text;
  }
}

}  // namespace
}  // namespace anchorage::server

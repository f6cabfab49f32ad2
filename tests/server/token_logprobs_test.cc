// fill_token_logprobs: the documented fixed-order log-softmax bit for bit, top-k order and
// ties, and the shortest round-trip printing of the values.
#include "server/token_logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "server/openai_json.h"

namespace anchorage::server {
namespace {

std::vector<float> random_logits(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = float(rng.normal() * 3.0);
  return v;
}

// The definition in token_logprobs.h, written out again.
float reference_logprob(const std::vector<float>& x, size_t i) {
  float m = x[0];
  for (float v : x) m = std::max(m, v);
  double s = 0.0;
  for (float v : x) s += std::exp(double(v) - double(m));
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

#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace anchorage::engine {
namespace {

std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(float(std::log(p)));
  return l;
}

std::vector<int> counts(const SamplingParams& params, const std::vector<float>& logits, int n) {
  Sampler s(params);
  std::vector<int> c(logits.size(), 0);
  for (int i = 0; i < n; ++i) ++c[size_t(s.sample(logits))];
  return c;
}

TEST(Sampler, GreedyIsArgmaxWithTiesToTheLowestId) {
  std::vector<float> l = {1.0f, 3.0f, 3.0f, 2.0f};
  EXPECT_EQ(Sampler::argmax(l), 1);
  Sampler greedy({.temperature = 0.0, .seed = 9});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(greedy.sample(l), 1);
  std::vector<float> neg = {-5.0f, -1.0f, -1.0f};
  EXPECT_EQ(Sampler::argmax(neg), 1);
  EXPECT_EQ(Sampler::argmax(std::vector<float>{7.0f}), 0);
}

TEST(Sampler, TopKKeepsTheKLargestWithLowIdsWinningTies) {
  std::vector<float> l = {0.0f, 5.0f, 5.0f, 4.9f};
  auto c = counts({.temperature = 1.0, .top_k = 1, .seed = 1}, l, 200);
  EXPECT_EQ(c[1], 200);
  c = counts({.temperature = 1.0, .top_k = 2, .seed = 1}, l, 2000);
  EXPECT_EQ(c[0] + c[3], 0);
  EXPECT_GT(c[1], 0);
  EXPECT_GT(c[2], 0);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  auto l = logits_of({0.5, 0.3, 0.15, 0.05});
  auto c = counts({.temperature = 1.0, .top_p = 0.7, .seed = 2}, l, 2000);
  EXPECT_EQ(c[2] + c[3], 0);
  EXPECT_GT(c[0], 0);
  EXPECT_GT(c[1], 0);
  c = counts({.temperature = 1.0, .top_p = 0.45, .seed = 2}, l, 200);
  EXPECT_EQ(c[0], 200);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheBest) {
  auto l = logits_of({0.5, 0.3, 0.15, 0.05});
  auto c = counts({.temperature = 1.0, .min_p = 0.25, .seed = 3}, l, 4000);
  EXPECT_EQ(c[3], 0);
  EXPECT_GT(c[2], 0);
  c = counts({.temperature = 1.0, .min_p = 1.0, .seed = 3}, l, 200);
  EXPECT_EQ(c[0], 200);
}

TEST(Sampler, TopKAppliesBeforeTopP) {
  // After top-k = 2 the kept mass renormalises to (0.57, 0.43), so top-p 0.5 keeps only id 0;
  // top-p first would have kept ids 0 and 1 (0.4 + 0.3 >= 0.5).
  auto l = logits_of({0.4, 0.3, 0.2, 0.1});
  auto c = counts({.temperature = 1.0, .top_k = 2, .top_p = 0.5, .seed = 4}, l, 500);
  EXPECT_EQ(c[0], 500);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  auto l = logits_of({0.75, 0.25});
  auto c = counts({.temperature = 1.0, .seed = 5}, l, 4000);
  EXPECT_GT(c[0], 2800);  // expected 3000
  EXPECT_LT(c[0], 3200);
  c = counts({.temperature = 0.05, .seed = 5}, l, 1000);
  EXPECT_EQ(c[0], 1000);  // (1/3)^20: effectively never id 1
  c = counts({.temperature = 1000.0, .seed = 5}, l, 4000);
  EXPECT_GT(c[1], 1800);  // nearly uniform
}

TEST(Sampler, SameSeedSameTokensOtherSeedOtherTokens) {
  std::vector<float> l;
  for (int i = 0; i < 100; ++i) l.push_back(float(std::sin(i * 0.7) * 2.0));
  SamplingParams p{.temperature = 0.9, .top_k = 40, .top_p = 0.95, .min_p = 0.02, .seed = 77};
  Sampler a(p), b(p);
  p.seed = 78;
  Sampler c(p);
  std::vector<int32_t> ta, tb, tc;
  for (int i = 0; i < 200; ++i) {
    ta.push_back(a.sample(l));
    tb.push_back(b.sample(l));
    tc.push_back(c.sample(l));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
  EXPECT_GT(std::set<int32_t>(ta.begin(), ta.end()).size(), 5u);
}

TEST(Sampler, ValidateNamesTheBadField) {
  EXPECT_TRUE(SamplingParams{}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.temperature = -1.0}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.temperature = NAN}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.top_k = -1}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.top_p = 0.0}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.top_p = 1.5}.validate().is_ok());
  EXPECT_FALSE(SamplingParams{.min_p = -0.1}.validate().is_ok());
  auto s = SamplingParams{.top_p = 2.0}.validate();
  EXPECT_NE(s.message().find("top_p"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::engine

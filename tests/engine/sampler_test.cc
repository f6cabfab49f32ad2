#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "core/rng.h"

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

// A vocabulary of `small`'s size, as the filters' candidate thresholds see it: most tokens far
// below a few (peaked) or most of them in play (flat).
std::vector<float> vocab_row(bool peaked, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(151936), 0.0f);
  for (float& v : x) v = float(rng.normal() * (peaked ? 1.5 : 3.0));
  if (peaked)
    for (int i = 0; i < 50; ++i) x[size_t((i * 2971) % 151936)] = 8.0f + 0.12f * float(i);
  return x;
}

// The ids in the filters' order (larger logit first, lower id on ties), by a full sort.
std::vector<int32_t> ranked(const std::vector<float>& l) {
  std::vector<int32_t> ids(l.size());
  for (size_t i = 0; i < l.size(); ++i) ids[i] = int32_t(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return l[size_t(a)] != l[size_t(b)] ? l[size_t(a)] > l[size_t(b)] : a < b;
  });
  return ids;
}

// Over a whole vocabulary every draw is one the filter keeps, by the definitions written out
// here in full (a full sort, every token's softmax): the candidate thresholds never lose one.
TEST(Sampler, FiltersOverAWholeVocabularyKeepWhatTheDefinitionsKeep) {
  for (const bool peaked : {true, false}) {
    const std::vector<float> l = vocab_row(peaked, peaked ? 11 : 12);
    const std::vector<int32_t> order = ranked(l);
    const double max_l = l[size_t(order[0])];
    // top-k 40, with ties in the data (rounded logits) so the id order matters.
    std::vector<float> tied = l;
    for (float& v : tied) v = std::round(v * 4.0f) / 4.0f;
    const std::vector<int32_t> tied_order = ranked(tied);
    const std::set<int32_t> top40(tied_order.begin(), tied_order.begin() + 40);
    Sampler k({.temperature = 1.0, .top_k = 40, .seed = 21});
    std::set<int32_t> seen;
    for (int i = 0; i < 1000; ++i) {
      const int32_t t = k.sample(tied);
      ASSERT_TRUE(top40.count(t)) << "top-k drew id " << t << " peaked=" << peaked;
      seen.insert(t);
    }
    EXPECT_GT(seen.size(), peaked ? 5u : 20u);
    // top-p 0.9: the shortest prefix of the ranking whose softmax mass reaches 0.9.
    double total = 0.0;
    for (const float v : l) total += std::exp(double(v) - max_l);
    std::set<int32_t> prefix;
    double mass = 0.0;
    for (const int32_t id : order) {
      prefix.insert(id);
      mass += std::exp(double(l[size_t(id)]) - max_l) / total;
      if (mass >= 0.9 + 1e-6) break;  // one token of slack for the sums' order
    }
    // The flat row's prefix is ~5,400 tokens of ~105,000 candidates (kept by halving, not a
    // sort): draws must also reach its lower half (6.5 % of its mass), or the kept set would be
    // short of it.
    std::set<int32_t> lower_half(order.begin() + ptrdiff_t(prefix.size() / 2),
                                 order.begin() + ptrdiff_t(prefix.size()));
    Sampler p({.temperature = 1.0, .top_p = 0.9, .seed = 22});
    int deep = 0;
    for (int i = 0; i < (peaked ? 1000 : 200); ++i) {
      const int32_t t = p.sample(l);
      ASSERT_TRUE(prefix.count(t)) << "top-p drew id " << t << " peaked=" << peaked;
      deep += int(lower_half.count(t));
    }
    if (!peaked) {
      EXPECT_GT(deep, 5);
    }
    // min-p 0.05: logit - max >= log(0.05).
    Sampler m({.temperature = 1.0, .min_p = 0.05, .seed = 23});
    for (int i = 0; i < 1000; ++i) {
      const int32_t t = m.sample(l);
      ASSERT_GE(double(l[size_t(t)]) - max_l, std::log(0.05)) << "min-p drew id " << t;
    }
  }
}

// 60 tokens 0.05 apart below the best (the rest 30 lower): top-k 50 needs the candidates down to
// 2.45 below the best and top-p 0.95 down to 2.3 (its prefix ends at rank 46), past the first
// thresholds tried (1 and 2 below). Draws must reach those tokens: a threshold that stopped too
// early would never give them.
TEST(Sampler, FilterThresholdsWidenUntilTheyHoldWhatTheFiltersKeep) {
  std::vector<float> l(static_cast<size_t>(151936), -20.0f);
  for (int i = 0; i < 60; ++i) l[size_t(1000 + 997 * i)] = 10.0f - 0.05f * float(i);
  auto rank_of = [&](int32_t id) { return (id - 1000) / 997; };
  Sampler k({.temperature = 1.0, .top_k = 50, .seed = 41});
  Sampler p({.temperature = 1.0, .top_p = 0.95, .seed = 42});
  int k_deep = 0, p_deep = 0;
  for (int i = 0; i < 2000; ++i) {
    const int32_t a = k.sample(l), b = p.sample(l);
    ASSERT_LT(rank_of(a), 50);
    ASSERT_LE(rank_of(b), 46);  // the prefix reaching 0.95 ends at rank 46
    k_deep += rank_of(a) > 40;  // 2 or more below the best
    p_deep += rank_of(b) > 40;
  }
  EXPECT_GT(k_deep, 40);  // expected 102
  EXPECT_GT(p_deep, 30);  // expected 74
}

// NaN logits are never candidates: top-k larger than the finite tokens keeps those only (a
// threshold short of k candidates must not sort past the end).
TEST(Sampler, TopKOverARowOfNaNsKeepsTheFiniteTokens) {
  std::vector<float> l(100, std::nanf(""));
  l[0] = 0.0f;  // (a NaN first has no distribution: the sampler returns 0, as the argmax does)
  l[5] = 1.0f;
  l[40] = 2.0f;
  l[77] = 0.5f;
  Sampler s({.temperature = 1.0, .top_k = 10, .seed = 51});
  std::set<int32_t> seen;
  for (int i = 0; i < 300; ++i) seen.insert(s.sample(l));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 5, 40, 77}));
}

// Temperature alone over a whole vocabulary (the vector exp and the lanes' sums): the draws
// follow the softmax. The peaked row's best token has probability 0.108 at T = 1 and 0.213 at
// T = 0.5; 20,000 draws put the frequency within 0.01 of it (over 4 standard deviations).
TEST(Sampler, TemperatureOverAWholeVocabularyFollowsTheSoftmax) {
  const std::vector<float> l = vocab_row(true, 11);
  const int32_t best = Sampler::argmax(l);
  for (const double t : {1.0, 0.5}) {
    double total = 0.0;
    for (const float v : l) total += std::exp((double(v) - double(l[size_t(best)])) / t);
    const double want = 1.0 / total;
    Sampler s({.temperature = t, .seed = 31});
    int hits = 0;
    for (int i = 0; i < 20000; ++i) hits += s.sample(l) == best;
    EXPECT_NEAR(double(hits) / 20000.0, want, 0.01) << "T=" << t;
  }
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

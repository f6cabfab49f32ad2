// ResponseCache: the same prompt ids and parameter string give the stored answer back whole;
// anything else misses; a hash is a hint; bytes are bounded with LRU eviction.
#include "cache/response_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace anchorage::cache {
namespace {

CachedResponse answer(int32_t first, int n, const char* finish = "length") {
  CachedResponse r;
  for (int i = 0; i < n; ++i) {
    CachedToken t;
    t.token = first + i;
    t.logprob = -0.25f * float(i) - 1e-7f;
    t.top = {{first + i, t.logprob}, {first + i + 1, -3.5f}};
    r.tokens.push_back(t);
  }
  r.finish_reason = finish;
  return r;
}

bool same_response(const CachedResponse& a, const CachedResponse& b) {
  if (a.finish_reason != b.finish_reason || a.tokens.size() != b.tokens.size()) return false;
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    const CachedToken& x = a.tokens[i];
    const CachedToken& y = b.tokens[i];
    if (x.token != y.token || std::memcmp(&x.logprob, &y.logprob, sizeof(float)) != 0 ||
        x.top.size() != y.top.size())
      return false;
    for (size_t k = 0; k < x.top.size(); ++k)
      if (x.top[k].first != y.top[k].first ||
          std::memcmp(&x.top[k].second, &y.top[k].second, sizeof(float)) != 0)
        return false;
  }
  return true;
}

const std::vector<int32_t> kPrompt = {11, 12, 13, 14};
constexpr char kGreedy[] = "t=0;max=16;lp=2";

TEST(ResponseCache, AnIdenticalRequestGetsTheStoredAnswer) {
  ResponseCache cache(ResponseCacheOptions{});
  EXPECT_FALSE(cache.find(kPrompt, kGreedy).has_value());
  const CachedResponse r = answer(100, 5, "stop_token");
  ASSERT_TRUE(cache.put(kPrompt, kGreedy, r));
  auto got = cache.find(kPrompt, kGreedy);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(same_response(r, *got));
  const ResponseCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.puts, 1);
  EXPECT_EQ(s.entries, 1);
  EXPECT_EQ(s.held_bytes, ResponseCache::entry_bytes(4, r));
}

TEST(ResponseCache, AnyOtherPromptOrParameterMisses) {
  ResponseCache cache(ResponseCacheOptions{});
  ASSERT_TRUE(cache.put(kPrompt, kGreedy, answer(100, 3)));
  EXPECT_FALSE(cache.find(kPrompt, "t=0;max=17;lp=2").has_value());
  EXPECT_FALSE(cache.find(std::vector<int32_t>{11, 12, 13}, kGreedy).has_value());
  EXPECT_FALSE(cache.find(std::vector<int32_t>{11, 12, 13, 14, 15}, kGreedy).has_value());
  EXPECT_FALSE(cache.find(std::vector<int32_t>{11, 12, 13, 15}, kGreedy).has_value());
  EXPECT_EQ(cache.stats().misses, 4);
}

TEST(ResponseCache, EqualHashesStillCompareThePrompt) {
  ResponseCache cache(ResponseCacheOptions{});
  cache.test_force_hash(7);
  const std::vector<int32_t> other = {21, 22, 23, 24};
  ASSERT_TRUE(cache.put(kPrompt, kGreedy, answer(100, 3)));
  ASSERT_TRUE(cache.put(other, kGreedy, answer(200, 2)));
  EXPECT_EQ(cache.stats().entries, 2);
  auto a = cache.find(kPrompt, kGreedy);
  auto b = cache.find(other, kGreedy);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->tokens[0].token, 100);
  EXPECT_EQ(b->tokens[0].token, 200);
  EXPECT_FALSE(cache.find(std::vector<int32_t>{31, 32, 33, 34}, kGreedy).has_value());
}

TEST(ResponseCache, APutReplacesTheSameKey) {
  ResponseCache cache(ResponseCacheOptions{});
  ASSERT_TRUE(cache.put(kPrompt, kGreedy, answer(100, 3)));
  ASSERT_TRUE(cache.put(kPrompt, kGreedy, answer(300, 1)));
  EXPECT_EQ(cache.stats().entries, 1);
  EXPECT_EQ(cache.find(kPrompt, kGreedy)->tokens[0].token, 300);
}

TEST(ResponseCache, BytesAreBoundedLeastRecentlyUsedFirst) {
  const int64_t one = ResponseCache::entry_bytes(4, answer(0, 8));
  ResponseCache cache(ResponseCacheOptions{.max_bytes = 2 * one});
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c = {9, 10, 11, 12};
  ASSERT_TRUE(cache.put(a, kGreedy, answer(0, 8)));
  ASSERT_TRUE(cache.put(b, kGreedy, answer(0, 8)));
  ASSERT_TRUE(cache.find(a, kGreedy).has_value());  // a is now the most recent
  ASSERT_TRUE(cache.put(c, kGreedy, answer(0, 8)));
  EXPECT_TRUE(cache.find(a, kGreedy).has_value());
  EXPECT_FALSE(cache.find(b, kGreedy).has_value());
  EXPECT_TRUE(cache.find(c, kGreedy).has_value());
  EXPECT_LE(cache.held_bytes(), 2 * one);
  EXPECT_EQ(cache.stats().evictions, 1);
  // Alone over the cap: declined, nothing evicted.
  EXPECT_FALSE(cache.put(b, kGreedy, answer(0, 100)));
  EXPECT_EQ(cache.stats().declined_big, 1);
  EXPECT_EQ(cache.stats().entries, 2);
  // As a CacheLevel.
  EXPECT_EQ(cache.level_name(), "response");
  EXPECT_EQ(cache.shed(1), one);
  EXPECT_FALSE(cache.find(a, kGreedy).has_value());  // the older of the two
  cache.clear();
  EXPECT_EQ(cache.held_bytes(), 0);
  EXPECT_FALSE(cache.find(c, kGreedy).has_value());
}

}  // namespace
}  // namespace anchorage::cache

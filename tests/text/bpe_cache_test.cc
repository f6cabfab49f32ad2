// BpeCache: what goes in comes out, long pieces are not kept, and a full shard starts over.
#include "text/bpe_cache.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace anchorage::text {
namespace {

TEST(BpeCache, FindWhatWasInserted) {
  BpeCache cache;
  const int32_t ids[] = {5, 6, 7};
  std::vector<int32_t> out = {1};
  EXPECT_FALSE(cache.find("hello", &out));
  cache.insert("hello", ids, 3);
  cache.insert("hell", ids, 1);
  EXPECT_TRUE(cache.find("hello", &out));
  EXPECT_EQ(out, (std::vector<int32_t>{1, 5, 6, 7}));  // appended
  out.clear();
  EXPECT_TRUE(cache.find("hell", &out));
  EXPECT_EQ(out, (std::vector<int32_t>{5}));
  EXPECT_FALSE(cache.find("hel", &out));
  EXPECT_EQ(cache.size(), 2u);
  cache.clear();
  EXPECT_FALSE(cache.find("hello", &out));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(BpeCache, LongPiecesAreNotKept) {
  BpeCache cache;
  const std::string longer(BpeCache::kMaxPieceBytes + 1, 'x');
  const int32_t ids[] = {1};
  cache.insert(longer, ids, 1);
  std::vector<int32_t> out;
  EXPECT_FALSE(cache.find(longer, &out));
}

TEST(BpeCache, StaysBoundedAndCorrectPastItsCapacity) {
  BpeCache cache(/*capacity_pieces=*/256);
  for (int32_t i = 0; i < 20000; ++i) {
    const std::string piece = "piece" + std::to_string(i);
    cache.insert(piece, &i, 1);
    std::vector<int32_t> out;
    ASSERT_TRUE(cache.find(piece, &out));  // the newest is always there
    ASSERT_EQ(out, std::vector<int32_t>{i});
  }
  EXPECT_LE(cache.size(), 16u * 32u);  // 16 shards of at most 32 (half of 64 slots)
}

}  // namespace
}  // namespace anchorage::text

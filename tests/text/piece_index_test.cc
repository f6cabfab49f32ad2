// PieceIndex: one by one and in batches it maps what was put in, refuses a key twice (keeping
// the first id), answers -1 for what was not, and grows without losing entries.
#include "text/piece_index.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace anchorage::text {
namespace {

// One key at a time: a batch of one, so the index grows as it goes.
bool insert_one(PieceIndex* index, std::string_view key, int32_t id, int32_t* existing = nullptr) {
  return index->insert_many({&key, 1}, {&id, 1}, existing) == 1;
}

std::vector<std::string> random_keys(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; ++i) {
    std::string k(1 + rng() % 20, '\0');
    for (char& c : k) c = char(rng() % 7);             // a small alphabet: many shared prefixes
    keys.push_back(std::move(k) + std::to_string(i));  // distinct
  }
  return keys;
}

TEST(PieceIndex, OneByOne) {
  PieceIndex index;  // starts small: every insert below past 12 grows it
  const std::vector<std::string> keys = random_keys(5000, 1);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(insert_one(&index, keys[i], int32_t(i)));
  EXPECT_EQ(index.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(index.find(keys[i]), int32_t(i));
  int32_t existing = -7;
  EXPECT_FALSE(insert_one(&index, keys[42], 9999, &existing));
  EXPECT_EQ(existing, 42);
  EXPECT_EQ(index.find(keys[42]), 42);
  EXPECT_EQ(index.size(), keys.size());
  EXPECT_EQ(index.find("not there"), -1);
  EXPECT_EQ(index.find(""), -1);
  EXPECT_TRUE(insert_one(&index, "", 5000));  // the empty key is a key like any other
  EXPECT_EQ(index.find(""), 5000);
}

TEST(PieceIndex, BatchesAgreeWithOneByOne) {
  const std::vector<std::string> keys = random_keys(20000, 2);
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<int32_t> ids(keys.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(ids.size() - i);
  PieceIndex batch(100);  // grows once, up front
  ASSERT_EQ(batch.insert_many(views, ids), keys.size());
  PieceIndex single;
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(insert_one(&single, keys[i], ids[i]));

  // Lookups of present and absent keys, interleaved.
  const std::vector<std::string> absent = random_keys(20000, 3);
  std::vector<std::string_view> queries;
  for (size_t i = 0; i < keys.size(); ++i) {
    queries.push_back(keys[(i * 7919) % keys.size()]);
    queries.push_back(absent[i] + "#");
  }
  std::vector<int32_t> found(queries.size(), -2);
  batch.find_many(queries, found);
  for (size_t i = 0; i < queries.size(); ++i) {
    ASSERT_EQ(found[i], single.find(queries[i])) << i;
    ASSERT_EQ(found[i] >= 0, i % 2 == 0) << i;
  }
}

TEST(PieceIndex, ABatchStopsAtTheFirstKeyAlreadyThere) {
  PieceIndex index;
  ASSERT_TRUE(insert_one(&index, "b", 7));
  const std::vector<std::string_view> keys = {"a", "b", "c"};
  const std::vector<int32_t> ids = {1, 2, 3};
  int32_t existing = -1;
  EXPECT_EQ(index.insert_many(keys, ids, &existing), 1u);
  EXPECT_EQ(existing, 7);
  EXPECT_EQ(index.find("a"), 1);
  EXPECT_EQ(index.find("b"), 7);
  EXPECT_EQ(index.find("c"), -1);
  EXPECT_EQ(index.size(), 2u);
}

// The TokenBytes forms agree with the views' forms: entry i -> id i, empty entries left out.
TEST(PieceIndex, EntriesAgreeWithViews) {
  const std::vector<std::string> keys = random_keys(3000, 4);
  TokenBytes entries;
  std::vector<std::string_view> views;
  std::vector<int32_t> ids;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool none = i % 5 == 3;  // "no such id"
    entries.push_back(none ? std::string_view() : std::string_view(keys[i]));
    if (!none) {
      views.push_back(keys[i]);
      ids.push_back(int32_t(i));
    }
  }
  PieceIndex from_entries(10), from_views(10);
  ASSERT_EQ(from_entries.insert_entries(entries), entries.size());
  ASSERT_EQ(from_views.insert_many(views, ids), views.size());
  EXPECT_EQ(from_entries.size(), views.size());
  TokenBytes queries;
  for (size_t i = 0; i < keys.size(); ++i) {
    queries.push_back(keys[(i * 31) % keys.size()]);
    queries.push_back(keys[i] + "#");
  }
  std::vector<int32_t> found(queries.size(), -2);
  from_entries.find_many(queries, found);
  for (size_t i = 0; i < queries.size(); ++i) {
    ASSERT_EQ(found[i], from_views.find(queries[i])) << i;
    const size_t key = (i / 2 * 31) % keys.size();
    ASSERT_EQ(found[i], i % 2 == 0 && key % 5 != 3 ? int32_t(key) : -1) << i;
  }
  // A repeated entry stops the batch there, naming the id that has its bytes.
  TokenBytes twice = {"x", "y", "x"};
  PieceIndex index;
  int32_t existing = -1;
  EXPECT_EQ(index.insert_entries(twice, &existing), 2u);
  EXPECT_EQ(existing, 0);
}

// find_many_two_threads answers as one by one: batches below its threshold (one thread), above it
// and odd-sized (two halves, the split entry on each side), empty entries included.
TEST(PieceIndex, TwoThreadBatchesAgreeWithOneByOne) {
  const std::vector<std::string> keys = random_keys(40001, 5);
  PieceIndex index(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(insert_one(&index, keys[i], int32_t(i)));
  for (const size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{16383}, size_t{16384},
                         size_t{40001}, size_t{80003}}) {
    TokenBytes queries;
    for (size_t i = 0; i < n; ++i) {
      if (i % 3 == 2)
        queries.push_back(keys[(i * 7919) % keys.size()] + "#");  // absent
      else if (i % 11 == 5)
        queries.push_back({});  // an empty entry: not a key
      else
        queries.push_back(keys[(i * 7919) % keys.size()]);
    }
    std::vector<int32_t> found(n, -2);
    index.find_many_two_threads(queries, found);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(found[i], index.find(queries[i])) << n << " " << i;
  }
}

}  // namespace
}  // namespace anchorage::text

// BpeModel: merge order (lowest rank first, leftmost on a tie), the two merge loops agreeing
// on random vocabularies and inputs, and the errors create() reports.
#include "text/bpe_model.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace anchorage::text {
namespace {

// A vocabulary of the 256 single bytes (id == byte) plus extra tokens.
std::vector<std::string> byte_vocab() {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  return v;
}

int32_t add(std::vector<std::string>* v, const std::string& bytes) {
  v->push_back(bytes);
  return static_cast<int32_t>(v->size() - 1);
}

// BpeModel's form of a vocabulary.
TokenBytes entries(const std::vector<std::string>& v) {
  TokenBytes t;
  for (const std::string& s : v) t.push_back(s);
  return t;
}

std::vector<int32_t> encode(const BpeModel& m, std::string_view s) {
  std::vector<int32_t> ids;
  m.encode_piece(s, &ids);
  return ids;
}

TEST(BpeModel, LowestRankFirstLeftmostOnATie) {
  std::vector<std::string> v = byte_vocab();
  const int32_t ab = add(&v, "ab"), aab = add(&v, "aab"), aa = add(&v, "aa");
  // rank 0: a+b, rank 1: a+ab, rank 2: a+a
  auto m = BpeModel::create(entries(v), {{'a', 'b'}, {'a', ab}, {'a', 'a'}}, false);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(encode(*m, "aab"), (std::vector<int32_t>{aab}));      // a,ab then aab
  EXPECT_EQ(encode(*m, "aaa"), (std::vector<int32_t>{aa, 'a'}));  // the leftmost pair wins
  EXPECT_EQ(encode(*m, "aaaa"), (std::vector<int32_t>{aa, aa}));
  EXPECT_EQ(encode(*m, "x"), (std::vector<int32_t>{'x'}));
  EXPECT_EQ(encode(*m, "bab"), (std::vector<int32_t>{'b', ab}));
}

TEST(BpeModel, RepeatedPairKeepsItsLastRank) {
  std::vector<std::string> v = byte_vocab();
  const int32_t ab = add(&v, "ab"), bc = add(&v, "bc");
  // (a,b) is listed first and again after (b,c): its rank is the later one, so "abc" -> a,bc.
  auto m = BpeModel::create(entries(v), {{'a', 'b'}, {'b', 'c'}, {'a', 'b'}}, false);
  ASSERT_TRUE(m);
  EXPECT_EQ(encode(*m, "abc"), (std::vector<int32_t>{'a', bc}));
  EXPECT_EQ(encode(*m, "ab"), (std::vector<int32_t>{ab}));
}

TEST(BpeModel, IgnoreMergesTakesAWholeToken) {
  std::vector<std::string> v = byte_vocab();
  const int32_t abc = add(&v, "abc");
  auto with = BpeModel::create(entries(v), {}, /*ignore_merges=*/true);
  auto without = BpeModel::create(entries(v), {}, /*ignore_merges=*/false);
  ASSERT_TRUE(with && without);
  EXPECT_EQ(encode(*with, "abc"), (std::vector<int32_t>{abc}));
  EXPECT_EQ(encode(*without, "abc"), (std::vector<int32_t>{'a', 'b', 'c'}));
}

TEST(BpeModel, ScanAndHeapAgreeOnRandomVocabularies) {
  std::mt19937 rng(11);
  for (int vocab = 0; vocab < 4; ++vocab) {
    std::vector<std::string> v = byte_vocab();
    std::vector<std::pair<int32_t, int32_t>> merges;
    std::vector<int32_t> pool = {'a', 'b', 'c', 'd'};
    std::set<std::pair<int32_t, int32_t>> used;
    while (merges.size() < 600) {
      const int32_t l = pool[rng() % pool.size()], r = pool[rng() % pool.size()];
      if (!used.insert({l, r}).second || v[l].size() + v[r].size() > 12) continue;
      const std::string joined = v[l] + v[r];
      int32_t id = -1;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == joined) id = static_cast<int32_t>(i);
      }
      if (id < 0) id = add(&v, joined);  // else another pair already makes this token
      pool.push_back(id);
      merges.emplace_back(l, r);
    }
    auto m = BpeModel::create(entries(v), merges, false);
    ASSERT_TRUE(m) << m.error().to_string();
    for (int n = 0; n < 1500; ++n) {
      std::string s(1 + rng() % 200, 'a');
      for (char& ch : s) ch = "abcde"[rng() % 5];
      std::vector<int32_t> by_scan(s.begin(), s.end()), by_heap(s.begin(), s.end());
      m->test_merge_by_scan(&by_scan);
      m->test_merge_by_heap(&by_heap);
      ASSERT_EQ(by_scan, by_heap) << "vocabulary " << vocab << ", case " << n;
      std::string joined;
      for (int32_t id : by_scan) joined += std::string(m->token_bytes(id));
      ASSERT_EQ(joined, s);
      ASSERT_EQ(encode(*m, s), by_scan);
    }
  }
}

TEST(BpeModel, CreateErrors) {
  std::vector<std::string> v = byte_vocab();
  v[200].clear();
  auto missing_byte = BpeModel::create(entries(v), {}, false);
  ASSERT_FALSE(missing_byte);
  EXPECT_EQ(missing_byte.error().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(missing_byte.error().message().find("byte 200"), std::string::npos);

  v = byte_vocab();
  add(&v, "a");
  EXPECT_FALSE(BpeModel::create(entries(v), {}, false));  // two ids with the same bytes

  v = byte_vocab();
  EXPECT_FALSE(BpeModel::create(entries(v), {{'a', 'b'}}, false));  // "ab" is not a token
  EXPECT_FALSE(BpeModel::create(entries(v), {{'a', 999}}, false));  // no id 999
}

}  // namespace
}  // namespace anchorage::text

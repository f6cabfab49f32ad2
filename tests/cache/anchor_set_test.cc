// AnchorSet: lookup by position, the byte budget with the newest anchors protected, and
// shedding. Anchors are real section copies of a toy engine at several lengths.
#include "cache/anchor_set.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

class AnchorSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::create(make_toy_architecture(3),
                                    {.capacity = 1024, .anchor_spacing = 64, .n_threads = 1});
    ASSERT_TRUE(e.has_value());
    engine_ = std::move(e.value());
    tokens_ = random_tokens(1024, engine_->vocab_size(), 9);
  }
  // The sections after a cold prefill of `pos` tokens.
  cache::SectionCopy at(int64_t pos) {
    engine_->reset();
    EXPECT_TRUE(engine_->prefill({tokens_.data(), size_t(pos)}).is_ok());
    return cache::SectionCopy::capture(*engine_);
  }
  int64_t one() { return engine_->cost().section_bytes; }

  std::unique_ptr<engine::Engine> engine_;
  std::vector<int32_t> tokens_;
};

TEST_F(AnchorSetTest, FindsTheLargestAnchorAtOrBelow) {
  cache::AnchorSet set(int64_t(1) << 30, 4);
  for (int64_t p : {64, 128, 200}) set.put(at(p));
  EXPECT_EQ(set.largest_at_or_below(63), nullptr);
  EXPECT_EQ(set.largest_at_or_below(64)->position(), 64);
  EXPECT_EQ(set.largest_at_or_below(127)->position(), 64);
  EXPECT_EQ(set.largest_at_or_below(199)->position(), 128);
  EXPECT_EQ(set.largest_at_or_below(5000)->position(), 200);
  EXPECT_EQ(set.held_bytes(), 3 * one());
  // The copy is the state at its position, bit for bit.
  EXPECT_TRUE(set.at(128)->same_bytes(at(128)));
  EXPECT_FALSE(set.at(128)->same_bytes(at(64)));
}

TEST_F(AnchorSetTest, TheBudgetEvictsTheOldestButNeverTheNewestFour) {
  cache::AnchorSet set(2 * one(), 4);
  for (int64_t p = 64; p <= 576; p += 64) set.put(at(p));
  set.put(at(600));
  // Over budget, but the newest four stay.
  EXPECT_EQ(set.positions(), (std::vector<int64_t>{448, 512, 576, 600}));
  EXPECT_EQ(set.evicted(), 6);
  cache::AnchorSet roomy(6 * one(), 4);
  for (int64_t p = 64; p <= 576; p += 64) roomy.put(at(p));
  EXPECT_EQ(roomy.positions(), (std::vector<int64_t>{256, 320, 384, 448, 512, 576}));
}

TEST_F(AnchorSetTest, HeadAnchorsGoLast) {
  // Head anchors: multiples of 128 up to 2 * 128.
  cache::AnchorSet set(4 * one(), 2, 128, 2);
  for (int64_t p = 64; p <= 576; p += 64) set.put(at(p));
  EXPECT_EQ(set.positions(), (std::vector<int64_t>{128, 256, 512, 576}));
  // Shedding goes in the same order, then takes the newest too (others before head ones).
  EXPECT_EQ(set.shed(1), one());
  EXPECT_EQ(set.positions(), (std::vector<int64_t>{256, 512, 576}));
  EXPECT_EQ(set.shed(2 * one()), 2 * one());
  EXPECT_EQ(set.positions(), (std::vector<int64_t>{576}));
}

TEST_F(AnchorSetTest, ReplacingAPositionKeepsOneCopy) {
  cache::AnchorSet set(int64_t(1) << 30, 4);
  set.put(at(64));
  set.put(at(64));
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.held_bytes(), one());
}

TEST_F(AnchorSetTest, DropTakeAndShed) {
  cache::AnchorSet set(int64_t(1) << 30, 4);
  for (int64_t p : {64, 128, 192, 256}) set.put(at(p));
  set.drop_above(128);
  EXPECT_EQ(set.positions(), (std::vector<int64_t>{64, 128}));
  cache::SectionCopy taken = set.take(64);
  EXPECT_EQ(taken.position(), 64);
  EXPECT_TRUE(set.take(64).empty());
  EXPECT_EQ(set.held_bytes(), one());
  // The Budget may take even the protected anchors.
  EXPECT_EQ(set.shed(1), one());
  EXPECT_EQ(set.size(), 0u);
  EXPECT_EQ(set.shed(1), 0);
  EXPECT_EQ(set.level_name(), "body_anchors");
}

}  // namespace
}  // namespace anchorage::test

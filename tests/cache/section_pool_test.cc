// SectionPool: a released copy's buffers serve the next capture of the same sizes, its old
// bytes never leak into the new copy (memcmp against the engine's sections), the bounds hold,
// and allocate() still hands out zeroed buffers.
#include "cache/section_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cache/state_copy.h"
#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

class SectionPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache::SectionPool::instance().clear();
    auto e = engine::Engine::create(make_toy_architecture(3),
                                    {.capacity = 256, .anchor_spacing = 64, .n_threads = 1});
    ASSERT_TRUE(e.has_value());
    engine_ = std::move(e.value());
    tokens_ = random_tokens(256, engine_->vocab_size(), 5);
  }
  void TearDown() override { cache::SectionPool::instance().clear(); }
  void prefill_to(int64_t pos) {
    engine_->reset();
    ASSERT_TRUE(engine_->prefill({tokens_.data(), size_t(pos)}).is_ok());
  }
  bool equals_engine(const cache::SectionCopy& c) {
    for (size_t i = 0; i < c.parts(); ++i)
      if (std::memcmp(c.part(i), engine_->section_data(i), c.part_bytes(i)) != 0) return false;
    return true;
  }

  std::unique_ptr<engine::Engine> engine_;
  std::vector<int32_t> tokens_;
};

TEST_F(SectionPoolTest, AReleasedCopysBuffersServeTheNextCaptureWithTheNewBytes) {
  prefill_to(64);
  const void* first_buffer = nullptr;
  {
    cache::SectionCopy a = cache::SectionCopy::capture(*engine_);
    first_buffer = a.part(0);
  }
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(), size_t(engine_->cost().section_bytes));
  prefill_to(200);
  cache::SectionCopy b = cache::SectionCopy::capture(*engine_);
  EXPECT_EQ(b.part(0), first_buffer);  // recycled, not a fresh allocation
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(), 0u);
  EXPECT_EQ(b.position(), 200);
  EXPECT_TRUE(equals_engine(b));
}

TEST_F(SectionPoolTest, AMovedOverCopyGivesItsBuffersBack) {
  prefill_to(64);
  cache::SectionCopy a = cache::SectionCopy::capture(*engine_);
  cache::SectionCopy b = cache::SectionCopy::capture(*engine_);
  a = std::move(b);  // a's old buffers leave with b
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(), 0u);
  { cache::SectionCopy gone = std::move(b); }
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(), size_t(engine_->cost().section_bytes));
  EXPECT_TRUE(equals_engine(a));
}

TEST_F(SectionPoolTest, KeepsAtMostItsBoundOfSets) {
  prefill_to(64);
  {
    std::vector<cache::SectionCopy> many;
    for (size_t i = 0; i < cache::SectionPool::kMaxSets + 3; ++i)
      many.push_back(cache::SectionCopy::capture(*engine_));
  }
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(),
            cache::SectionPool::kMaxSets * size_t(engine_->cost().section_bytes));
}

TEST_F(SectionPoolTest, ARowCopysBuffersServeTheNextRowCaptureOfTheSameSizes) {
  prefill_to(200);
  const void* first_buffer = nullptr;
  {
    cache::RowCopy a = cache::RowCopy::capture(*engine_, 0, 64);
    first_buffer = a.part(0);
  }
  EXPECT_GT(cache::SectionPool::instance().held_bytes(), 0u);
  cache::RowCopy b = cache::RowCopy::capture(*engine_, 64, 128);
  EXPECT_EQ(b.part(0), first_buffer);
  EXPECT_EQ(cache::SectionPool::instance().held_bytes(), 0u);  // taken, not allocated
  // Its bytes are rows [64, 128) of the engine, not the old copy's [0, 64).
  cache::RowCopy fresh = cache::RowCopy::allocate(engine_->layout(), 64, 128);
  ASSERT_TRUE(fresh.write_back(*engine_).is_ok());  // zeros over the rows in place...
  ASSERT_TRUE(b.write_back(*engine_).is_ok());      // ...and the copy puts them back
  cache::RowCopy again = cache::RowCopy::capture(*engine_, 64, 128);
  for (size_t i = 0; i < b.parts(); ++i)
    EXPECT_EQ(std::memcmp(b.part(i), again.part(i), b.part_bytes(i)), 0) << "view " << i;
  prefill_to(200);  // the engine's own rows, computed again
  cache::RowCopy truth = cache::RowCopy::capture(*engine_, 64, 128);
  for (size_t i = 0; i < b.parts(); ++i)
    EXPECT_EQ(std::memcmp(b.part(i), truth.part(i), b.part_bytes(i)), 0) << "view " << i;
}

// write_back_view (the spill's restore writes each view from its own thread): one view's rows
// [a, b) and nothing else, and a range outside the copy or a view past the layout writes nothing.
TEST_F(SectionPoolTest, WritingBackOneViewWritesOnlyThatViewsRows) {
  prefill_to(200);
  const cache::RowCopy copy = cache::RowCopy::capture(*engine_, 64, 128);
  std::reverse(tokens_.begin(), tokens_.end());  // other rows in place
  prefill_to(200);
  const core::StateLayout& layout = engine_->layout();
  ASSERT_GE(layout.views.size(), 2u);
  auto rows_of = [&](size_t v, int64_t a, int64_t b) {
    std::vector<uint8_t> out(size_t((b - a) * layout.views[v].bytes_per_token()));
    core::copy_rows_out(layout.views[v], engine_->view_data(v), a, b, out.data());
    return out;
  };
  std::vector<std::vector<uint8_t>> before;
  for (size_t v = 0; v < layout.views.size(); ++v) before.push_back(rows_of(v, 0, 200));
  const std::vector<uint8_t> low = rows_of(1, 0, 80), high = rows_of(1, 100, 200);
  std::vector<uint8_t> copied(size_t(20 * layout.views[1].bytes_per_token()));
  core::copy_token_rows(layout.views[1], copied.data(), 20, 0, copy.part(1), 64, 16, 20);
  ASSERT_NE(rows_of(1, 80, 100), copied);                            // the write changes something
  EXPECT_FALSE(copy.write_back_view(*engine_, 1, 60, 100).is_ok());  // below the copy
  EXPECT_FALSE(copy.write_back_view(*engine_, layout.views.size(), 80, 100).is_ok());
  for (size_t v = 0; v < layout.views.size(); ++v) EXPECT_EQ(rows_of(v, 0, 200), before[v]);
  ASSERT_TRUE(copy.write_back_view(*engine_, 1, 80, 100).is_ok());
  EXPECT_EQ(rows_of(1, 80, 100), copied);
  EXPECT_EQ(rows_of(1, 0, 80), low);
  EXPECT_EQ(rows_of(1, 100, 200), high);
  for (size_t v = 0; v < layout.views.size(); ++v) {
    if (v != 1) {
      EXPECT_EQ(rows_of(v, 0, 200), before[v]) << "view " << v;
    }
  }
}

TEST_F(SectionPoolTest, OddSizesPushedInLaterDoNotKeepSectionsFromBeingRecycled) {
  prefill_to(200);
  {
    std::vector<cache::RowCopy> odd;  // row copies of four other sizes fill every slot
    for (int64_t rows = 1; rows <= int64_t(cache::SectionPool::kMaxSets); ++rows)
      odd.push_back(cache::RowCopy::capture(*engine_, 0, rows));
  }
  // Held bytes tell a recycled set from a fresh allocation (malloc may hand back the same
  // address either way).
  cache::SectionPool& pool = cache::SectionPool::instance();
  const size_t section = size_t(engine_->cost().section_bytes);
  { cache::SectionCopy released = cache::SectionCopy::capture(*engine_); }
  const size_t after_release = pool.held_bytes();
  cache::SectionCopy again = cache::SectionCopy::capture(*engine_);
  EXPECT_EQ(pool.held_bytes() + section, after_release);  // the newest set was kept and taken
  EXPECT_TRUE(equals_engine(again));
  // An empty copy has nothing to reuse: it takes no slot.
  const size_t held = pool.held_bytes();
  for (size_t i = 0; i < cache::SectionPool::kMaxSets; ++i) {
    cache::RowCopy empty = cache::RowCopy::capture(*engine_, 5, 5);
  }
  EXPECT_EQ(pool.held_bytes(), held);
  { cache::SectionCopy gone = std::move(again); }
  const size_t before_third = pool.held_bytes();
  cache::SectionCopy third = cache::SectionCopy::capture(*engine_);
  EXPECT_EQ(pool.held_bytes() + section, before_third);
}

TEST_F(SectionPoolTest, AllocateHandsOutZeroedBuffersEvenWhenRecycled) {
  prefill_to(200);
  { cache::SectionCopy dirty = cache::SectionCopy::capture(*engine_); }
  cache::SectionCopy z = cache::SectionCopy::allocate(engine_->layout(), 7);
  ASSERT_GT(z.parts(), 0u);
  for (size_t i = 0; i < z.parts(); ++i) {
    const std::vector<char> zeros(z.part_bytes(i), 0);
    EXPECT_EQ(std::memcmp(z.part(i), zeros.data(), zeros.size()), 0) << "section " << i;
  }
}

std::vector<size_t> section_sizes(const engine::Engine& e) {
  std::vector<size_t> sizes;
  for (const core::TensorSpec& spec : e.layout().sections) sizes.push_back(size_t(spec.bytes()));
  return sizes;
}

TEST_F(SectionPoolTest, StockedSparesServeTheNextCapturesWithTheEnginesBytes) {
  cache::SectionPool& pool = cache::SectionPool::instance();
  const size_t section = size_t(engine_->cost().section_bytes);
  const std::vector<size_t> sizes = section_sizes(*engine_);
  auto yes = [](size_t) { return true; };
  auto never = [] { return false; };
  EXPECT_EQ(pool.stock(sizes, 3, yes, never), 3u);
  EXPECT_EQ(pool.held_bytes(), 3 * section);
  EXPECT_EQ(pool.stock(sizes, 3, yes, never), 0u);  // already there: nothing added
  // Never more than kMaxSets - 1, so a released set still finds room.
  const size_t most = cache::SectionPool::kMaxSets - 1;
  EXPECT_EQ(pool.stock(sizes, 100, yes, never), most - 3);
  EXPECT_EQ(pool.held_bytes(), most * section);
  prefill_to(100);
  std::vector<cache::SectionCopy> taken;
  for (int i = 0; i < 3; ++i) {
    taken.push_back(cache::SectionCopy::capture(*engine_));
    EXPECT_TRUE(equals_engine(taken.back()));  // a zeroed spare, filled with the state
  }
  EXPECT_EQ(pool.held_bytes(), (most - 3) * section);  // taken, not allocated
}

TEST_F(SectionPoolTest, StockingStopsWhenTheBudgetOrAWaitingRequestSaysSo) {
  cache::SectionPool& pool = cache::SectionPool::instance();
  const size_t section = size_t(engine_->cost().section_bytes);
  const std::vector<size_t> sizes = section_sizes(*engine_);
  size_t asked = 0;
  // The budget allows one set: the second is not added.
  auto one = [&](size_t bytes) {
    EXPECT_EQ(bytes, section);
    return pool.held_bytes() + bytes <= section;
  };
  EXPECT_EQ(pool.stock(sizes, 3, one, [] { return false; }), 1u);
  // A request waits: nothing more, and the budget is not even asked.
  EXPECT_EQ(pool.stock(
                sizes, 3,
                [&](size_t) {
                  ++asked;
                  return true;
                },
                [] { return true; }),
            0u);
  EXPECT_EQ(asked, 0u);
  EXPECT_EQ(pool.held_bytes(), section);
}

TEST_F(SectionPoolTest, TheSpareLevelShedsTheOldestSetsFirst) {
  cache::SectionPool& pool = cache::SectionPool::instance();
  cache::SparePoolLevel level(pool);
  const size_t section = size_t(engine_->cost().section_bytes);
  prefill_to(64);
  { cache::SectionCopy a = cache::SectionCopy::capture(*engine_); }
  { cache::RowCopy b = cache::RowCopy::capture(*engine_, 0, 16); }
  const size_t rows = pool.held_bytes() - section;
  EXPECT_EQ(level.level_name(), "spare_states");
  EXPECT_EQ(level.held_bytes(), int64_t(section + rows));
  EXPECT_EQ(level.shed(1), int64_t(section));  // the oldest set, whole
  EXPECT_EQ(level.held_bytes(), int64_t(rows));
  prefill_to(32);
  cache::RowCopy again = cache::RowCopy::capture(*engine_, 0, 16);  // the row set is still there
  EXPECT_EQ(pool.held_bytes(), 0u);
  EXPECT_EQ(level.shed(int64_t(1) << 40), 0);
}

}  // namespace
}  // namespace anchorage::test

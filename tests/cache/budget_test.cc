// Budget: the ceiling decides whether a cache may grow, the peak whether a prefill runs;
// levels are shed cheapest first and a prefill that cannot fit is refused. With fake levels
// and with a real StateStore.
#include "cache/budget.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/state_store.h"
#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::cache {
namespace {

// Holds `units` blocks of `unit` bytes and gives them back whole, like a tier's entries.
class FakeLevel final : public CacheLevel {
 public:
  FakeLevel(std::string name, int64_t unit, int64_t units, std::vector<std::string>* log)
      : name_(std::move(name)), unit_(unit), units_(units), log_(log) {}
  std::string_view level_name() const override { return name_; }
  int64_t held_bytes() const override { return unit_ * units_; }
  int64_t shed(int64_t want) override {
    if (log_) log_->push_back(name_);
    int64_t freed = 0;
    while (freed < want && units_ > 0) {
      --units_;
      freed += unit_;
    }
    return freed;
  }

 private:
  std::string name_;
  int64_t unit_;
  int64_t units_;
  std::vector<std::string>* log_;
};

TEST(Budget, ForMemoryTakesTheSeedsFractionsOfTheMachine) {
  // The seed's board: 128 GiB gives its own 70 / 77 / 2 GiB.
  const BudgetOptions board = BudgetOptions::for_memory(int64_t(128) << 30);
  EXPECT_EQ(board.ceiling_bytes, int64_t(70) << 30);
  EXPECT_EQ(board.peak_bytes, int64_t(77) << 30);
  EXPECT_EQ(board.slack_bytes, int64_t(2) << 30);
  // This project's 24 GiB machine: 13.125 / 14.4375 / 0.375 GiB.
  const BudgetOptions ours = BudgetOptions::for_memory(int64_t(24) << 30);
  EXPECT_EQ(ours.ceiling_bytes, (int64_t(24) << 30) / 128 * 70);
  EXPECT_EQ(ours.peak_bytes, (int64_t(24) << 30) / 128 * 77);
  EXPECT_EQ(ours.slack_bytes, (int64_t(24) << 30) / 64);
  // Not a multiple of 128: still the floor of the exact fraction.
  const BudgetOptions odd = BudgetOptions::for_memory(1000);
  EXPECT_EQ(odd.ceiling_bytes, 1000 * 70 / 128);
  EXPECT_EQ(odd.peak_bytes, 1000 * 77 / 128);
  // Unknown memory: the seed's absolute figures.
  const BudgetOptions unknown = BudgetOptions::for_memory(0);
  EXPECT_EQ(unknown.ceiling_bytes, BudgetOptions{}.ceiling_bytes);
  EXPECT_EQ(unknown.peak_bytes, BudgetOptions{}.peak_bytes);
}

TEST(Budget, MayGrowUnderTheCeilingLessTheSlack) {
  Budget b(BudgetOptions{.ceiling_bytes = 1000, .peak_bytes = 2000, .slack_bytes = 100}, 100);
  FakeLevel a("a", 50, 1, nullptr);
  EXPECT_TRUE(b.may_grow(800));  // 100 + 0 + 800 = 900 = 1000 - 100
  b.add_level(&a);
  EXPECT_EQ(b.held_bytes(), 50);
  EXPECT_FALSE(b.may_grow(800));
  EXPECT_TRUE(b.may_grow(750));
  EXPECT_EQ(b.growth_deficit(800), 50);
  b.set_engine_bytes(150);
  EXPECT_FALSE(b.may_grow(750));
}

TEST(Budget, PrefillShedsCheapestFirstOnlyAsFarAsNeeded) {
  std::vector<std::string> order;
  FakeLevel a("a", 100, 3, &order), c("c", 200, 1, &order);
  Budget b(BudgetOptions{.ceiling_bytes = 700, .peak_bytes = 700, .slack_bytes = 0}, 100);
  b.add_level(&a);
  b.add_level(&c);
  // 100 + 500 + 100 fits: nothing shed.
  EXPECT_TRUE(b.make_room_for_prefill(100).is_ok());
  EXPECT_TRUE(order.empty());
  // 100 + 500 + 300 is 200 over: two of a's blocks go, c keeps its bytes.
  EXPECT_TRUE(b.make_room_for_prefill(300).is_ok());
  EXPECT_EQ(order, std::vector<std::string>({"a"}));
  EXPECT_EQ(a.held_bytes(), 100);
  EXPECT_EQ(c.held_bytes(), 200);
  // Now 100 + 300 + 500 is 200 over: a's last block, then c.
  EXPECT_TRUE(b.make_room_for_prefill(500).is_ok());
  EXPECT_EQ(order, std::vector<std::string>({"a", "a", "c"}));
  EXPECT_EQ(b.held_bytes(), 0);
  const BudgetStats s = b.stats();
  EXPECT_EQ(s.prefills_checked, 3);
  EXPECT_EQ(s.prefills_shed, 2);
  EXPECT_EQ(s.refusals, 0);
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].name, "a");
  EXPECT_EQ(s.levels[0].shed_bytes, 300);
  EXPECT_EQ(s.levels[1].shed_bytes, 200);
  EXPECT_EQ(s.shed_bytes, 500);
}

TEST(Budget, APrefillThatCannotFitIsRefused) {
  FakeLevel a("a", 100, 2, nullptr);
  Budget b(BudgetOptions{.ceiling_bytes = 700, .peak_bytes = 700, .slack_bytes = 0}, 100);
  b.add_level(&a);
  const core::Status s = b.make_room_for_prefill(601);
  EXPECT_EQ(s.code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(a.held_bytes(), 0);  // everything went, and still not enough
  EXPECT_EQ(b.stats().refusals, 1);
  EXPECT_TRUE(b.make_room_for_prefill(600).is_ok());
}

// A read's rows held beyond the engine (a prewarm's blocks) are charged as a prefill's
// workspace is: levels shed until they fit; one that would not fit with every level shed is
// refused at once, nothing shed.
TEST(Budget, AReadShedsLevelsOrIsRefusedWithNothingShed) {
  FakeLevel a("a", 100, 3, nullptr);
  Budget b(BudgetOptions{.ceiling_bytes = 700, .peak_bytes = 700, .slack_bytes = 0}, 100);
  b.add_level(&a);
  const core::Status s = b.make_room_for_read(601);
  EXPECT_EQ(s.code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(a.held_bytes(), 300) << "nothing shed for a read that cannot fit";
  EXPECT_EQ(b.stats().refusals, 1);
  EXPECT_TRUE(b.make_room_for_read(300).is_ok());
  EXPECT_EQ(a.held_bytes(), 300) << "100 + 300 + 300 fits";
  EXPECT_TRUE(b.make_room_for_read(500).is_ok());
  EXPECT_EQ(a.held_bytes(), 100) << "two blocks went";
  const BudgetStats st = b.stats();
  EXPECT_EQ(st.reads_checked, 3);
  EXPECT_EQ(st.prefills_checked, 0);
  EXPECT_EQ(st.prefills_shed, 1);
}

TEST(Budget, AValuableLevelShedsOnlyCheaperOnes) {
  std::vector<std::string> order;
  FakeLevel a("a", 100, 2, &order), m("m", 100, 2, &order), z("z", 100, 2, &order);
  Budget b(BudgetOptions{}, 0);
  b.add_level(&a);
  b.add_level(&m);
  b.add_level(&z);
  EXPECT_EQ(b.held_cheaper_than(m), 200);
  EXPECT_EQ(b.held_cheaper_than(a), 0);
  EXPECT_EQ(b.shed_cheaper_than(z, 300), 300);
  EXPECT_EQ(order, std::vector<std::string>({"a", "m"}));
  EXPECT_EQ(z.held_bytes(), 200);
  EXPECT_EQ(b.shed_cheaper_than(a, 100), 0);
  b.remove_level(&m);
  EXPECT_EQ(b.held_bytes(), 200);
}

TEST(Budget, WorkspaceEstimateFollowsTheCost) {
  engine::StateCost c;
  c.workspace_floor = 10;
  c.workspace_per_token = 3;
  c.workspace_cap = 100;
  EXPECT_EQ(Budget::prefill_workspace_bytes(c, 0), 10);
  EXPECT_EQ(Budget::prefill_workspace_bytes(c, 1), 10);
  EXPECT_EQ(Budget::prefill_workspace_bytes(c, 11), 40);
  EXPECT_EQ(Budget::prefill_workspace_bytes(c, 1000), 100);
}

// With a real StateStore registered as the cheapest level.
class BudgetWithStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::create(
        test::make_toy_architecture(7),
        engine::EngineOptions{
            .capacity = 512, .prefill_chunk = 64, .anchor_spacing = 64, .n_threads = 1});
    ASSERT_TRUE(e.has_value());
    e_ = std::move(e.value());
    one_ = StateStore::entry_bytes_for(*e_, 64);
  }
  StorePut put(StateStore& store, uint64_t seed) {
    const auto t = test::random_tokens(64, e_->vocab_size(), seed);
    e_->reset();
    EXPECT_TRUE(e_->prefill(t).is_ok());
    return store.put_session(*e_, t);
  }

  std::unique_ptr<engine::Engine> e_;
  int64_t one_ = 0;
  const int64_t engine_bytes_ = 1000;
};

TEST_F(BudgetWithStore, PutsStayUnderTheCeiling) {
  // Room for two entries under the ceiling; the store's own cap would take ten.
  Budget b(BudgetOptions{.ceiling_bytes = engine_bytes_ + 2 * one_ + one_ / 2 + 64,
                         .peak_bytes = int64_t(1) << 40,
                         .slack_bytes = 64},
           engine_bytes_);
  StateStore store(StateStoreOptions{.cache_bytes = 10 * one_, .entry_bytes = one_});
  b.add_level(&store);
  store.set_budget(&b);
  EXPECT_EQ(put(store, 1), StorePut::kStored);
  EXPECT_EQ(put(store, 2), StorePut::kStored);
  EXPECT_EQ(put(store, 3), StorePut::kStored);  // the oldest made way, before the clone
  EXPECT_EQ(store.entries(), 2);
  EXPECT_EQ(store.stats().peak_bytes, 2 * one_);
  EXPECT_TRUE(b.may_grow(0));
}

TEST_F(BudgetWithStore, APutShedsCheaperLevelsFirstAndDeclinesWhenNothingHelps) {
  std::vector<std::string> order;
  FakeLevel cheap("cheap", one_, 1, &order);
  Budget b(BudgetOptions{.ceiling_bytes = engine_bytes_ + 2 * one_,
                         .peak_bytes = int64_t(1) << 40,
                         .slack_bytes = 0},
           engine_bytes_);
  StateStore store(StateStoreOptions{.cache_bytes = 10 * one_, .entry_bytes = one_});
  b.add_level(&cheap);
  b.add_level(&store);
  store.set_budget(&b);
  EXPECT_EQ(put(store, 1), StorePut::kStored);
  EXPECT_EQ(put(store, 2), StorePut::kStored);  // the cheaper level gave its block
  EXPECT_EQ(order, std::vector<std::string>({"cheap"}));
  EXPECT_EQ(cheap.held_bytes(), 0);
  EXPECT_EQ(store.entries(), 2);

  // A more valuable level holds everything but one entry's room minus a byte: no put fits.
  FakeLevel dear("dear", 2 * one_ + 1, 1, nullptr);
  b.add_level(&dear);
  store.clear();
  EXPECT_EQ(put(store, 3), StorePut::kDeclinedMemory);
  EXPECT_EQ(store.stats().declined_memory, 1);
  EXPECT_EQ(dear.held_bytes(), 2 * one_ + 1);  // not the store's to shed
}

TEST_F(BudgetWithStore, APrefillShedsTheStore) {
  Budget b(BudgetOptions{.ceiling_bytes = int64_t(1) << 40,
                         .peak_bytes = engine_bytes_ + 3 * one_,
                         .slack_bytes = 0},
           engine_bytes_);
  StateStore store(StateStoreOptions{.cache_bytes = 10 * one_, .entry_bytes = one_});
  b.add_level(&store);
  store.set_budget(&b);
  for (uint64_t s = 1; s <= 3; ++s) ASSERT_EQ(put(store, s), StorePut::kStored);
  EXPECT_TRUE(b.make_room_for_prefill(one_).is_ok());  // one entry goes
  EXPECT_EQ(store.entries(), 2);
  EXPECT_EQ(b.stats().levels[0].shed_bytes, one_);
  const core::Status refused = b.make_room_for_prefill(3 * one_ + 1);
  EXPECT_EQ(refused.code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(store.entries(), 0);
}

}  // namespace
}  // namespace anchorage::cache

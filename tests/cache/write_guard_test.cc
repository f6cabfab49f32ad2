// WriteGuard: the three levels and what each lets through, the local day boundary (a fake
// clock), the counts kept across a reopen, a corrupt counts file starting at zero, and the
// disk tier planning nothing past the budget.
#include "cache/write_guard.h"

#include <gtest/gtest.h>

#include <memory>

#include "cache/blob_store.h"
#include "core/mem_fs.h"

namespace anchorage::cache {
namespace {

struct Rig {
  core::MemFs fs;
  std::unique_ptr<LocalDirStore> store;
  int64_t now = 1'700'000'000 / 86400 * 86400 + 3600;  // 01:00 UTC
  Rig() { store = std::move(LocalDirStore::open(fs, "/root").value()); }
  WriteGuardOptions options(int64_t budget) {
    WriteGuardOptions o;
    o.budget_bytes = budget;
    o.now_s = [this] { return now; };
    o.utc_offset_s = 0;
    return o;
  }
};

TEST(WriteGuard, LevelsAndWhatEachLetsThrough) {
  Rig r;
  auto g = WriteGuard::open(r.store.get(), r.options(1000));
  EXPECT_EQ(g->level(), WriteLevel::kOk);
  EXPECT_TRUE(g->allow_tier());
  EXPECT_TRUE(g->allow_spill(SpillWrite::kEviction, 100));
  g->add(WriteSource::kTier, 700);
  g->add(WriteSource::kSpill, 301);  // 1001 > 1000
  EXPECT_EQ(g->level(), WriteLevel::kOver);
  EXPECT_FALSE(g->allow_tier());
  EXPECT_FALSE(g->allow_spill(SpillWrite::kEviction, 100));
  EXPECT_TRUE(g->allow_spill(SpillWrite::kEviction, 40000));  // a long conversation
  EXPECT_TRUE(g->allow_spill(SpillWrite::kDrain, 100));
  g->add(WriteSource::kTier, 500);  // 1501 > 1.5 * 1000
  EXPECT_EQ(g->level(), WriteLevel::kHard);
  EXPECT_FALSE(g->allow_spill(SpillWrite::kEviction, 40000));
  EXPECT_TRUE(g->allow_spill(SpillWrite::kDrain, 100));
  const WriteGuardStats s = g->stats();
  EXPECT_EQ(s.today.tier_bytes, 1200);
  EXPECT_EQ(s.today.spill_bytes, 301);
  EXPECT_EQ(s.tier_skips, 1);
  EXPECT_EQ(s.spill_skips, 2);
}

TEST(WriteGuard, TheDayTurnsAtLocalMidnightAndTheCountsSurviveAReopen) {
  Rig r;
  {
    auto g = WriteGuard::open(r.store.get(), r.options(1000));
    g->add(WriteSource::kTier, 2000);
    EXPECT_EQ(g->level(), WriteLevel::kHard);
  }
  {
    auto g = WriteGuard::open(r.store.get(), r.options(1000));  // a restart, same day
    EXPECT_EQ(g->level(), WriteLevel::kHard);
    EXPECT_EQ(g->stats().today.tier_bytes, 2000);
  }
  r.now += 23 * 3600;  // 00:00 the next day (UTC)
  auto g = WriteGuard::open(r.store.get(), r.options(1000));
  EXPECT_EQ(g->level(), WriteLevel::kOk);
  EXPECT_EQ(g->stats().today.tier_bytes, 0);
  ASSERT_EQ(g->stats().last_days.size(), 1u);  // yesterday's still shown
  EXPECT_EQ(g->stats().last_days[0].tier_bytes, 2000);
  // The same instant is still the previous day 2 hours west of UTC.
  WriteGuardOptions west = r.options(1000);
  west.utc_offset_s = -2 * 3600;
  EXPECT_EQ(WriteGuard::open(r.store.get(), west)->level(), WriteLevel::kHard);
}

TEST(WriteGuard, ACorruptCountsFileStartsAtZero) {
  Rig r;
  {
    auto g = WriteGuard::open(r.store.get(), r.options(1000));
    g->add(WriteSource::kTier, 2000);
  }
  auto* bytes = r.fs.mutable_contents(std::string("/root/") + WriteGuard::kFileName);
  ASSERT_NE(bytes, nullptr);
  (*bytes)[40] ^= std::byte{1};
  auto g = WriteGuard::open(r.store.get(), r.options(1000));
  EXPECT_EQ(g->level(), WriteLevel::kOk);
}

}  // namespace
}  // namespace anchorage::cache

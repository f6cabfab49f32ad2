// HugePageArena: zeroed, aligned, disjoint pieces; large requests get chunks of their own; many
// threads cutting at once get disjoint pieces.
#include "core/huge_page_arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace anchorage::core {
namespace {

// Every piece is zero, aligned, and overlaps no other (sorted by address, each ends before the
// next begins); then each is filled with its own byte and read back, so a shared byte shows.
void expect_disjoint(std::vector<std::pair<uint8_t*, size_t>> pieces) {
  for (const auto& [p, n] : pieces) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % HugePageArena::kAlign, 0u);
    EXPECT_TRUE(std::all_of(p, p + n, [](uint8_t b) { return b == 0; }));
  }
  std::sort(pieces.begin(), pieces.end());
  for (size_t i = 1; i < pieces.size(); ++i)
    EXPECT_LE(pieces[i - 1].first + pieces[i - 1].second, pieces[i].first) << i;
  for (size_t i = 0; i < pieces.size(); ++i)
    std::memset(pieces[i].first, int(i % 251 + 1), pieces[i].second);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const uint8_t want = uint8_t(i % 251 + 1);
    EXPECT_TRUE(std::all_of(pieces[i].first, pieces[i].first + pieces[i].second, [&](uint8_t b) {
      return b == want;
    })) << i;
  }
}

TEST(HugePageArena, PiecesAreZeroAlignedAndDisjoint) {
  HugePageArena a;
  std::vector<std::pair<uint8_t*, size_t>> pieces;
  // Odd sizes (rounded to kAlign inside), enough of them to close several chunks.
  for (size_t i = 0; i < 50; ++i) {
    const size_t n = 1 + (i * 7919 * 4099) % (HugePageArena::kChunk / 8);
    pieces.push_back({a.allocate(n), n});
  }
  expect_disjoint(pieces);
  EXPECT_GE(a.allocated_bytes(), a.mapped_bytes() / 2);  // chunks are mostly used
}

TEST(HugePageArena, ALargeRequestGetsAChunkOfItsOwn) {
  HugePageArena a;
  uint8_t* small = a.allocate(100);
  const size_t mapped = a.mapped_bytes();
  EXPECT_EQ(mapped, HugePageArena::kChunk);
  const size_t big = HugePageArena::kChunk + 12345;
  uint8_t* large = a.allocate(big);
  EXPECT_GE(a.mapped_bytes(), mapped + big);
  // The shared chunk stays open: the next small piece follows the first.
  uint8_t* next = a.allocate(100);
  EXPECT_EQ(next, small + 128);
  expect_disjoint({{small, 100}, {large, big}, {next, 100}});
}

TEST(HugePageArena, ThreadsCuttingAtOnceGetDisjointPieces) {
  HugePageArena a;
  constexpr int kThreads = 4, kEach = 150;
  std::vector<std::vector<std::pair<uint8_t*, size_t>>> got(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const size_t n = 64 + size_t((t * 131 + i * 977) % 200000);
        got[size_t(t)].push_back({a.allocate(n), n});
      }
    });
  for (std::thread& t : ts) t.join();
  std::vector<std::pair<uint8_t*, size_t>> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  expect_disjoint(all);
}

}  // namespace
}  // namespace anchorage::core

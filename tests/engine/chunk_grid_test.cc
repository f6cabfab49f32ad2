#include "engine/chunk_grid.h"

#include <gtest/gtest.h>

#include <vector>

namespace anchorage::engine {
namespace {

std::vector<int64_t> call_ends(const ChunkGrid& g, int64_t begin, int64_t end) {
  std::vector<int64_t> ends;
  for (int64_t pos = begin; pos < end;) {
    int64_t e = g.next_end(pos, end);
    EXPECT_GT(e, pos);
    EXPECT_LE(e - pos, g.chunk_tokens);
    ends.push_back(e);
    pos = e;
  }
  return ends;
}

TEST(ChunkGrid, CutsAtChunkSizeAndEveryAnchorLine) {
  ChunkGrid g{1024, 1024, 1};
  EXPECT_EQ(call_ends(g, 0, 2500), (std::vector<int64_t>{1024, 2048, 2500}));
  // A resumed prefill cuts at the absolute lines, not at begin + k * chunk.
  EXPECT_EQ(call_ends(g, 1000, 2100), (std::vector<int64_t>{1024, 2048, 2100}));
  ChunkGrid small_anchor{1024, 64, 1};
  EXPECT_EQ(call_ends(small_anchor, 100, 300), (std::vector<int64_t>{128, 192, 256, 300}));
  ChunkGrid small_chunk{100, 1024, 1};
  EXPECT_EQ(call_ends(small_chunk, 950, 1250), (std::vector<int64_t>{1024, 1124, 1224, 1250}));
}

TEST(ChunkGrid, OffGridStartReturnsToTheGrid) {
  ChunkGrid g{64, 128, 16};
  // The first call ends at the next 16-line, every later call starts on the grid.
  EXPECT_EQ(call_ends(g, 37, 200), (std::vector<int64_t>{48, 112, 128, 192, 200}));
  EXPECT_EQ(call_ends(g, 0, 40), (std::vector<int64_t>{40}));
}

TEST(ChunkGrid, AnchorLines) {
  ChunkGrid g{1024, 64, 1};
  EXPECT_FALSE(g.is_anchor_line(0));
  EXPECT_TRUE(g.is_anchor_line(64));
  EXPECT_FALSE(g.is_anchor_line(65));
  EXPECT_TRUE(g.is_anchor_line(1024));
}

}  // namespace
}  // namespace anchorage::engine

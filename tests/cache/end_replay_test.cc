// replay_hidden: hidden spans put back, whitespace glue aligned next to them, everything else
// token for token. Synthetic ids: 1 and 2 are glue (whitespace-only tokens).
#include "cache/end_replay.h"

#include <gtest/gtest.h>

#include <vector>

namespace anchorage::test {
namespace {

using cache::HiddenSpan;
using V = std::vector<int32_t>;
const V kGlue = {1, 2};

std::optional<V> replay(const V& rows, std::vector<HiddenSpan> hidden, const V& prompt) {
  return cache::replay_hidden(rows, hidden, prompt, kGlue);
}

TEST(EndReplay, WithoutSpansTheCopyMustStartWithEveryRowToken) {
  EXPECT_EQ(replay({10, 11, 12}, {}, {10, 11, 12, 13}), (V{10, 11, 12, 13}));
  EXPECT_EQ(replay({10, 11, 12}, {}, {10, 11, 12}), (V{10, 11, 12}));
  EXPECT_FALSE(replay({10, 11, 12}, {}, {10, 11, 14, 13}).has_value());
  EXPECT_FALSE(replay({10, 11, 12}, {}, {10, 11}).has_value());
}

TEST(EndReplay, PutsAHiddenSpanBack) {
  // rows: 10 11 [50 51] 12 | copy: 10 11 12 13
  EXPECT_EQ(replay({10, 11, 50, 51, 12}, {{2, 4}}, {10, 11, 12, 13}), (V{10, 11, 50, 51, 12, 13}));
  // Two spans, one at the end of the rows.
  EXPECT_EQ(replay({10, 50, 11, 12, 60}, {{1, 2}, {4, 5}}, {10, 11, 12, 7}),
            (V{10, 50, 11, 12, 60, 7}));
}

TEST(EndReplay, AlignsWhitespaceNextToASpan) {
  // rows: 10 [1] [50] 2 11 (the phrase sat between two whitespace tokens);
  // the copy renders one newline run instead: 10 1 1 11.
  EXPECT_EQ(replay({10, 1, 50, 2, 11}, {{2, 3}}, {10, 1, 1, 11, 20}), (V{10, 1, 50, 2, 11, 20}));
  // The copy lost the whitespace altogether.
  EXPECT_EQ(replay({10, 1, 50, 2, 11}, {{2, 3}}, {10, 11, 20}), (V{10, 1, 50, 2, 11, 20}));
  // Whitespace away from a span is not glue.
  EXPECT_FALSE(replay({10, 1, 11, 50, 12}, {{3, 4}}, {10, 11, 12}).has_value());
  // A non-whitespace token that differs is a parting.
  EXPECT_FALSE(replay({10, 1, 50, 2, 11}, {{2, 3}}, {10, 1, 12, 20}).has_value());
}

TEST(EndReplay, RefusesSpansOutsideTheRows) {
  EXPECT_FALSE(replay({10, 11}, {{1, 3}}, {10, 11}).has_value());
  EXPECT_FALSE(replay({10, 11, 12, 13}, {{2, 3}, {0, 1}}, {11, 13}).has_value());
}

}  // namespace
}  // namespace anchorage::test

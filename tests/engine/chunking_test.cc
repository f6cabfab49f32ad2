// Invariant: a prefill's result does not depend on how it is cut into forward calls —
// chunks of 1,024, chunks of 100 and one token per prefill call give the same bits
// (logits of every row, every section, every view row). For the toy (exact_granularity 16)
// the chunkings are multiples of 16, and one token per call is checked to DIFFER.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

class Chunking : public ::testing::TestWithParam<ModelVariant> {};

struct PrefillRun {
  StateSnapshot state;
  std::vector<float> all_logits;
};

PrefillRun prefill_with_chunk(const ModelVariant& v, const std::vector<int32_t>& tokens,
                              int64_t chunk) {
  auto e = make_engine(v, {.capacity = int64_t(tokens.size()) + 16,
                           .prefill_chunk = chunk,
                           .anchor_spacing = 1024,
                           .n_threads = 2});
  PrefillRun r;
  engine::PrefillOptions po;
  po.all_logits = &r.all_logits;
  EXPECT_TRUE(e->prefill(tokens, po).is_ok());
  r.state = take_snapshot(*e);
  return r;
}

TEST_P(Chunking, ChunkSizeDoesNotChangeABit) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  const int64_t g = arch->exact_granularity();
  auto tokens = random_tokens(v.n_tokens, arch->vocab_size(), 11);
  PrefillRun big = prefill_with_chunk(v, tokens, 1024);
  for (int64_t chunk : {g == 1 ? int64_t(100) : 6 * g, g}) {
    PrefillRun other = prefill_with_chunk(v, tokens, chunk);
    EXPECT_TRUE(same_state(big.state, other.state)) << "chunk " << chunk;
    EXPECT_TRUE(same_bits(big.all_logits, other.all_logits)) << "chunk " << chunk;
  }
}

TEST_P(Chunking, OneTokenPerCallEqualsOneCall) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  auto tokens = random_tokens(v.n_tokens, arch->vocab_size(), 12);
  PrefillRun whole = prefill_with_chunk(v, tokens, 1024);

  auto e = make_engine(v, {.capacity = int64_t(tokens.size()) + 16, .n_threads = 2});
  std::vector<float> rows;
  engine::PrefillOptions po;
  po.all_logits = &rows;
  for (int32_t t : tokens) ASSERT_TRUE(e->prefill({&t, 1}, po).is_ok());
  if (arch->exact_granularity() == 1) {
    EXPECT_TRUE(same_state(whole.state, take_snapshot(*e)));
    EXPECT_TRUE(same_bits(whole.all_logits, rows));
  } else {
    // Calls off the architecture's grid are allowed to differ, and the toy's do: the grid it
    // declares is not a formality (the caches' taint path depends on it).
    EXPECT_FALSE(same_state(whole.state, take_snapshot(*e)));
  }
}

// Extra lines (branch points a cache asks for) cut the prefill there, report the state there,
// and change no bit; a line off the architecture's grid is not taken.
TEST_P(Chunking, ExtraLinesAreReportedAndChangeNoBit) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  const int64_t g = arch->exact_granularity();
  auto tokens = random_tokens(v.n_tokens, arch->vocab_size(), 13);
  PrefillRun whole = prefill_with_chunk(v, tokens, 1024);
  const int64_t on_grid = 37 * g, off_grid = g == 1 ? 0 : 5 * g + 1;
  auto e = make_engine(v, {.capacity = int64_t(tokens.size()) + 16, .n_threads = 2});
  std::vector<float> rows;
  std::vector<int64_t> reported;
  engine::PrefillOptions po;
  po.all_logits = &rows;
  po.extra_lines = {off_grid, on_grid};
  po.on_anchor = [&](int64_t pos, bool) { reported.push_back(pos); };
  ASSERT_TRUE(e->prefill(tokens, po).is_ok());
  EXPECT_TRUE(same_state(whole.state, take_snapshot(*e)));
  EXPECT_TRUE(same_bits(whole.all_logits, rows));
  EXPECT_NE(std::find(reported.begin(), reported.end(), on_grid), reported.end());
  if (off_grid > 0) {
    EXPECT_EQ(std::find(reported.begin(), reported.end(), off_grid), reported.end());
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Chunking, ::testing::ValuesIn(invariant_variants()), variant_name);

}  // namespace
}  // namespace anchorage::test

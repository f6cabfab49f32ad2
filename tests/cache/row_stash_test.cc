// RowStash: rows copied aside and written back are the rows they were, bit for bit, whatever
// ran in between; a shed stash is gone.
#include "cache/row_stash.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

// Rows [a, b) of every view, packed.
std::vector<std::vector<uint8_t>> rows_of(engine::Engine& e, int64_t a, int64_t b) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < e.layout().views.size(); ++i) {
    const core::TensorSpec& spec = e.layout().views[i];
    out.emplace_back(size_t((b - a) * spec.bytes_per_token()));
    core::copy_rows_out(spec, e.view_data(i), a, b, out.back().data());
  }
  return out;
}

TEST(RowStash, PutsTheRowsBackBitForBit) {
  auto e = engine::Engine::create(make_toy_architecture(3), {.capacity = 512, .n_threads = 1});
  ASSERT_TRUE(e.has_value());
  engine::Engine& engine = *e.value();
  ASSERT_TRUE(engine.prefill(random_tokens(300, engine.vocab_size(), 1)).is_ok());
  const auto before = rows_of(engine, 32, 160);

  cache::RowStash stash;
  stash.stash(engine, 32, 160);
  EXPECT_TRUE(stash.held());
  EXPECT_EQ(stash.begin(), 32);
  EXPECT_EQ(stash.end(), 160);
  EXPECT_EQ(stash.held_bytes(), 128 * engine.cost().bytes_per_token);

  // A guest writes rows [0, 132).
  engine.reset();
  ASSERT_TRUE(engine.prefill(random_tokens(132, engine.vocab_size(), 2)).is_ok());
  EXPECT_NE(rows_of(engine, 32, 160), before);
  ASSERT_TRUE(stash.put_back(engine).is_ok());
  EXPECT_FALSE(stash.held());
  EXPECT_EQ(rows_of(engine, 32, 160), before);
}

TEST(RowStash, AShedStashHoldsNothing) {
  auto e = engine::Engine::create(make_toy_architecture(3), {.capacity = 256, .n_threads = 1});
  ASSERT_TRUE(e.has_value());
  cache::RowStash stash;
  EXPECT_EQ(stash.shed(1), 0);
  stash.stash(*e.value(), 0, 64);
  EXPECT_EQ(stash.shed(1), 64 * e.value()->cost().bytes_per_token);
  EXPECT_FALSE(stash.held());
  EXPECT_EQ(stash.held_bytes(), 0);
  EXPECT_EQ(stash.level_name(), "guest_stash");
}

}  // namespace
}  // namespace anchorage::test

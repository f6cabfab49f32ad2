// ParkedSession: holds a conversation's blocks, anchors and end, counts their bytes, hands
// them over whole and sheds them. (The swap itself is ResidentPrefix's, tested there.)
#include "cache/parked_session.h"

#include <gtest/gtest.h>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

TEST(ParkedSession, HoldsReleasesAndSheds) {
  auto e = engine::Engine::create(make_toy_architecture(3), {.capacity = 256, .n_threads = 1});
  ASSERT_TRUE(e.has_value());
  engine::Engine& engine = *e.value();
  const std::vector<int32_t> tokens = random_tokens(100, engine.vocab_size(), 1);
  ASSERT_TRUE(engine.prefill(tokens).is_ok());

  cache::ParkedSession::Contents c;
  c.tokens = tokens;
  c.session = "a";
  c.begin = 32;
  c.block_rows = 32;
  for (int64_t x = 32; x < 100; x += 32)
    c.blocks.push_back(cache::RowCopy::capture(engine, x, std::min<int64_t>(x + 32, 100)));
  c.anchors[96] = cache::SectionCopy::capture(engine);  // a stand-in: any section copy
  c.end = cache::SectionCopy::capture(engine);
  c.marks.hidden = {{90, 92}};
  EXPECT_EQ(c.rows_end(), 100);

  cache::ParkedSession park;
  EXPECT_FALSE(park.held());
  park.park(std::move(c));
  EXPECT_TRUE(park.held());
  const int64_t bytes = 68 * engine.cost().bytes_per_token + 2 * engine.cost().section_bytes;
  EXPECT_EQ(park.held_bytes(), bytes);
  EXPECT_EQ(park.anchor_at_or_below(95), -1);
  EXPECT_EQ(park.anchor_at_or_below(96), 96);

  cache::ParkedSession::Contents out = park.release();
  EXPECT_FALSE(park.held());
  EXPECT_EQ(park.held_bytes(), 0);
  EXPECT_EQ(out.session, "a");
  EXPECT_EQ(out.blocks.size(), 3u);
  EXPECT_EQ(out.marks.hidden.size(), 1u);

  park.park(std::move(out));
  EXPECT_EQ(park.shed(1), bytes);
  EXPECT_EQ(park.shed(1), 0);
  EXPECT_EQ(park.level_name(), "park");
}

}  // namespace
}  // namespace anchorage::test

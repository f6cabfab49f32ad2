// EndAnchor: keeps one state, hands it over, and sheds it.
#include "cache/end_anchor.h"

#include <gtest/gtest.h>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

TEST(EndAnchor, KeepsReleasesAndSheds) {
  auto e = engine::Engine::create(make_toy_architecture(3), {.capacity = 256, .n_threads = 1});
  ASSERT_TRUE(e.has_value());
  engine::Engine& engine = *e.value();
  ASSERT_TRUE(engine.prefill(random_tokens(40, engine.vocab_size(), 1)).is_ok());
  ASSERT_TRUE(engine.decode(3).is_ok());

  cache::EndAnchor end;
  EXPECT_FALSE(end.held());
  EXPECT_EQ(end.position(), -1);
  end.keep(cache::SectionCopy::capture(engine));
  EXPECT_TRUE(end.held());
  EXPECT_EQ(end.position(), 41);
  EXPECT_EQ(end.held_bytes(), engine.cost().section_bytes);

  cache::SectionCopy out = end.release();
  EXPECT_EQ(out.position(), 41);
  EXPECT_FALSE(end.held());
  EXPECT_EQ(end.held_bytes(), 0);

  end.keep(std::move(out));
  EXPECT_EQ(end.shed(1), engine.cost().section_bytes);
  EXPECT_EQ(end.shed(1), 0);
  EXPECT_EQ(end.level_name(), "end_anchor");
}

}  // namespace
}  // namespace anchorage::test

// PinnedHead: a pinned head written back and resumed at one of its anchors equals a cold
// prefill (memcmp), after other rows overwrote the live buffers.
#include "cache/pinned_head.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

TEST(PinnedHead, RestoresTheHeadAtAPinnedAnchorExactly) {
  const engine::EngineOptions o{.capacity = 512, .anchor_spacing = 64, .n_threads = 1};
  auto e = engine::Engine::create(make_toy_architecture(3), o);
  auto cold = engine::Engine::create(make_toy_architecture(3), o);
  ASSERT_TRUE(e.has_value() && cold.has_value());
  engine::Engine& engine = *e.value();
  const std::vector<int32_t> head = random_tokens(256, engine.vocab_size(), 1);

  std::map<int64_t, cache::SectionCopy> anchors;
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool) {
    if (pos == 64 || pos == 192) anchors[pos] = cache::SectionCopy::capture(engine);
  };
  ASSERT_TRUE(engine.prefill(head, po).is_ok());
  cache::PinnedHead pin;
  EXPECT_FALSE(pin.held());
  pin.pin(head, cache::RowCopy::capture(engine, 0, 256), std::move(anchors),
          cache::PinnedHead().taint());
  EXPECT_TRUE(pin.held());
  EXPECT_EQ(pin.anchor_at_or_below(191), 64);
  EXPECT_EQ(pin.anchor_at_or_below(300), 192);
  EXPECT_EQ(pin.anchor_at_or_below(10), -1);
  const int64_t bpt = engine.cost().bytes_per_token;
  const int64_t sec = engine.cost().section_bytes;
  EXPECT_EQ(pin.held_bytes(), 256 * bpt + 2 * sec);
  EXPECT_EQ(pin.restore_bytes(192), 192 * bpt + sec);

  // Something else fills the engine; the head comes back and a new tail is prefilled.
  engine.reset();
  ASSERT_TRUE(engine.prefill(random_tokens(400, engine.vocab_size(), 2)).is_ok());
  ASSERT_TRUE(pin.restore(engine, 192).is_ok());
  EXPECT_EQ(engine.length(), 192);
  std::vector<int32_t> prompt(head.begin(), head.begin() + 192);
  const std::vector<int32_t> tail = random_tokens(50, engine.vocab_size(), 3);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  ASSERT_TRUE(engine.prefill(tail).is_ok());
  ASSERT_TRUE(cold.value()->prefill(prompt).is_ok());
  EXPECT_TRUE(same_state(take_snapshot(*cold.value()), take_snapshot(engine)));

  EXPECT_FALSE(pin.restore(engine, 100).is_ok());  // no anchor there
  EXPECT_EQ(pin.shed(1), 256 * bpt + 2 * sec);
  EXPECT_FALSE(pin.held());
  EXPECT_EQ(pin.level_name(), "pin");
}

}  // namespace
}  // namespace anchorage::test

// The engine's contract on the toy: errors are Status (and leave the state alone), anchor and
// progress callbacks fire exactly where docs/engine.md says, settle() is callable at any time,
// and cost() matches the layout.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::engine {
namespace {

using test::make_toy_architecture;
using test::random_tokens;
using test::same_state;
using test::take_snapshot;

constexpr int64_t kVocab = test::ToyArchitecture::kVocab;

std::unique_ptr<Engine> toy_engine(EngineOptions o) {
  auto e = Engine::create(make_toy_architecture(3), o);
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

TEST(Engine, RefusesBadOptions) {
  auto arch = make_toy_architecture(3);
  auto refused = [&](EngineOptions o) {
    auto e = Engine::create(*arch, o);
    return !e.has_value() && e.error().code() == core::StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused({.capacity = 0}));
  EXPECT_TRUE(refused({.prefill_chunk = 0}));
  EXPECT_TRUE(refused({.anchor_spacing = 0}));
  EXPECT_TRUE(refused({.n_threads = -1}));
  EXPECT_TRUE(refused({.prefill_chunk = 100}));  // not on the toy's 16-grid
  EXPECT_TRUE(refused({.anchor_spacing = 24}));
  EXPECT_TRUE(Engine::create(*arch, {.capacity = 64, .prefill_chunk = 32, .anchor_spacing = 16})
                  .has_value());
}

TEST(Engine, ErrorsAreStatusAndLeaveTheStateAlone) {
  auto e = toy_engine({.capacity = 100, .prefill_chunk = 32, .anchor_spacing = 32, .n_threads = 1});
  auto tokens = random_tokens(90, kVocab, 1);
  ASSERT_TRUE(e->prefill(tokens).is_ok());
  auto before = take_snapshot(*e);

  EXPECT_EQ(e->prefill({}).code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(e->prefill(random_tokens(11, kVocab, 2)).code(), core::StatusCode::kInvalidArgument);
  std::vector<int32_t> bad = {1, 2, int32_t(kVocab)};
  EXPECT_EQ(e->prefill(bad).code(), core::StatusCode::kInvalidArgument);
  bad = {-1};
  EXPECT_EQ(e->prefill(bad).code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(e->decode(int32_t(kVocab)).code(), core::StatusCode::kInvalidArgument);
  EXPECT_TRUE(same_state(before, take_snapshot(*e)));

  EXPECT_EQ(e->resume_at(101).code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(e->resume_at(-1).code(), core::StatusCode::kInvalidArgument);
  EXPECT_TRUE(same_state(before, take_snapshot(*e)));

  // Exactly up to the capacity works; one more token does not.
  ASSERT_TRUE(e->prefill(random_tokens(10, kVocab, 3)).is_ok());
  EXPECT_EQ(e->length(), 100);
  EXPECT_EQ(e->decode(1).code(), core::StatusCode::kInvalidArgument);
  EXPECT_TRUE(e->resume_at(100).is_ok());
  EXPECT_TRUE(e->resume_at(0).is_ok());
}

TEST(Engine, AnchorCallbacksFireAtEveryLineAndAtTheEnd) {
  auto e =
      toy_engine({.capacity = 1024, .prefill_chunk = 256, .anchor_spacing = 64, .n_threads = 1});
  std::vector<std::pair<int64_t, bool>> events;
  std::vector<std::pair<int64_t, int64_t>> progress;
  PrefillOptions po;
  po.on_anchor = [&](int64_t p, bool end) { events.emplace_back(p, end); };
  po.on_progress = [&](int64_t done, int64_t total) { progress.emplace_back(done, total); };

  ASSERT_TRUE(e->prefill(random_tokens(200, kVocab, 1), po).is_ok());
  EXPECT_EQ(events, (std::vector<std::pair<int64_t, bool>>{
                        {64, false}, {128, false}, {192, false}, {200, true}}));
  EXPECT_EQ(progress, (std::vector<std::pair<int64_t, int64_t>>{
                          {64, 200}, {128, 200}, {192, 200}, {200, 200}}));

  // A continuation that ends on a line reports it once, as the end.
  events.clear();
  ASSERT_TRUE(e->prefill(random_tokens(56, kVocab, 2), po).is_ok());
  EXPECT_EQ(events, (std::vector<std::pair<int64_t, bool>>{{256, true}}));

  // A prefill that passes no line reports only its end; a decode reports nothing.
  events.clear();
  ASSERT_TRUE(e->decode(5).is_ok());
  ASSERT_TRUE(e->prefill(random_tokens(3, kVocab, 3), po).is_ok());
  EXPECT_EQ(events, (std::vector<std::pair<int64_t, bool>>{{260, true}}));
}

TEST(Engine, AnchorStateIsTheStateOfAColdPrefillOfThatPrefix) {
  const EngineOptions o{
      .capacity = 512, .prefill_chunk = 128, .anchor_spacing = 64, .n_threads = 1};
  auto tokens = random_tokens(300, kVocab, 9);
  auto e = toy_engine(o);
  std::vector<test::StateSnapshot> at_lines;
  PrefillOptions po;
  po.on_anchor = [&](int64_t p, bool end) {
    EXPECT_EQ(e->length(), p);
    at_lines.push_back(take_snapshot(*e));
  };
  ASSERT_TRUE(e->prefill(tokens, po).is_ok());
  ASSERT_EQ(at_lines.size(), 5u);  // 64, 128, 192, 256, end 300
  for (const auto& snap : at_lines) {
    auto cold = toy_engine(o);
    ASSERT_TRUE(cold->prefill({tokens.data(), size_t(snap.length)}).is_ok());
    auto expected = take_snapshot(*cold);
    if (snap.logits.empty()) expected.logits.clear();  // mid-prefill: no logits yet
    EXPECT_TRUE(same_state(expected, snap)) << "at " << snap.length;
  }
  EXPECT_FALSE(at_lines.back().logits.empty());
}

TEST(Engine, SettleIsCallableAtAnyTimeAndChangesNothing) {
  auto e = toy_engine({.capacity = 256, .prefill_chunk = 64, .anchor_spacing = 64, .n_threads = 2});
  e->settle();
  auto empty = take_snapshot(*e);
  e->settle();
  EXPECT_TRUE(same_state(empty, take_snapshot(*e)));
  PrefillOptions po;
  po.on_anchor = [&](int64_t, bool) { e->settle(); };
  po.on_progress = [&](int64_t, int64_t) { e->settle(); };
  ASSERT_TRUE(e->prefill(random_tokens(150, kVocab, 4), po).is_ok());
  auto after = take_snapshot(*e);
  e->settle();
  e->settle();
  EXPECT_TRUE(same_state(after, take_snapshot(*e)));
  ASSERT_TRUE(e->decode(3).is_ok());
  e->settle();
  e->reset();
  e->settle();
  EXPECT_EQ(e->length(), 0);
}

TEST(Engine, LogitsAreDroppedByResetAndResume) {
  auto e = toy_engine({.capacity = 64, .prefill_chunk = 32, .anchor_spacing = 32, .n_threads = 1});
  EXPECT_FALSE(e->has_logits());
  ASSERT_TRUE(e->prefill(random_tokens(20, kVocab, 1)).is_ok());
  EXPECT_TRUE(e->has_logits());
  EXPECT_EQ(int64_t(e->logits().size()), kVocab);
  ASSERT_TRUE(e->resume_at(16).is_ok());
  EXPECT_FALSE(e->has_logits());
  ASSERT_TRUE(e->decode(1).is_ok());
  EXPECT_TRUE(e->has_logits());
  e->reset();
  EXPECT_FALSE(e->has_logits());
  EXPECT_EQ(e->length(), 0);
}

TEST(Engine, ResetZeroesSections) {
  auto e = toy_engine({.capacity = 64, .prefill_chunk = 32, .anchor_spacing = 32, .n_threads = 1});
  ASSERT_TRUE(e->prefill(random_tokens(20, kVocab, 1)).is_ok());
  e->reset();
  for (size_t i = 0; i < e->layout().sections.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(e->section_data(i));
    for (int64_t b = 0; b < e->layout().sections[i].bytes(); ++b) ASSERT_EQ(p[b], 0) << i;
  }
}

TEST(Engine, CostMatchesTheLayout) {
  auto e = toy_engine({.capacity = 4096, .prefill_chunk = 256, .anchor_spacing = 256});
  StateCost c = e->cost();
  EXPECT_EQ(c.section_bytes, 2 * 16 * 4 + 16 * 3 * 2);
  EXPECT_EQ(c.bytes_per_token, 2 * 16 * 4 + 24 * 4 + 4 * 2);
  EXPECT_EQ(c.section_bytes, e->layout().section_bytes());
  EXPECT_EQ(e->exact_granularity(), 16);
  EXPECT_GT(c.workspace_floor, 0);
  EXPECT_GE(c.workspace_cap, c.workspace_floor + c.workspace_per_token * 255 - 255);
  EXPECT_LE(c.workspace_cap, c.workspace_floor + c.workspace_per_token * 255);
}

}  // namespace
}  // namespace anchorage::engine

// StateStore: hits resume bit for bit as a cold prefill would (tiny f32 and the toy, whose
// 16-token grid keeps the taint paths honest), every hit compares every token, room is made
// before a snapshot is cloned, LRU, declines and their once-per-conversation log.
#include "cache/state_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cache/planner.h"
#include "core/dtype.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"
#include "support/toy_architecture.h"

namespace anchorage::cache {
namespace {

using test::random_tokens;
using test::same_state;
using test::scribble;
using test::StateSnapshot;
using test::take_snapshot;

struct StoreModel {
  std::string name;
  std::function<std::unique_ptr<model::Architecture>()> make;
};

void PrintTo(const StoreModel& m, std::ostream* os) {
  *os << m.name;
}

std::vector<StoreModel> store_models() {
  return {
      {"toy", [] { return test::make_toy_architecture(7); }},
      {"qwen35_tiny_f32",
       [] { return test::make_tiny_qwen35(core::DType::kF32, core::DType::kF32); }},
  };
}

engine::EngineOptions small_engine_options() {
  engine::EngineOptions o;
  o.capacity = 1024;
  o.prefill_chunk = 64;
  o.anchor_spacing = 64;
  o.n_threads = 1;
  return o;
}

std::unique_ptr<engine::Engine> make_engine(const StoreModel& m) {
  auto e = engine::Engine::create(m.make(), small_engine_options());
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int32_t> head(const std::vector<int32_t>& a, int64_t n) {
  return std::vector<int32_t>(a.begin(), a.begin() + n);
}

// Plans `prompt` against the store, restores the offer into `e`, prefills the rest.
StoreRestore resume(StateStore& store, engine::Engine& e, const std::vector<int32_t>& prompt,
                    int64_t expect_at) {
  const ResumeOffer o = store.offer(prompt, {});
  EXPECT_EQ(o.resume_at, expect_at);
  EXPECT_EQ(tier_of(o.source), ResumeTier::kRamSnapshot);
  EXPECT_EQ(o.source, ResumeSource::kStore);
  scribble(e);
  auto r = store.take(e, o);
  EXPECT_TRUE(r.has_value());
  if (!r.has_value()) return {};
  EXPECT_EQ(e.length(), expect_at);
  std::vector<int32_t> rest(prompt.begin() + expect_at, prompt.end());
  EXPECT_TRUE(e.prefill(rest).is_ok());
  return r.value();
}

class StoreExactness : public ::testing::TestWithParam<StoreModel> {};

// A prefix snapshot taken in on_anchor at prefix_line: prompts sharing a prefix at the line,
// between lines (past it) and below it.
TEST_P(StoreExactness, PrefixHitsEqualColdAtBetweenAndBelowTheLine) {
  auto e = make_engine(GetParam());
  auto ref = make_engine(GetParam());
  const int64_t vocab = e->vocab_size();
  StateStore store(StateStoreOptions{.prefix_chunk = 64});
  const std::vector<int32_t> first = random_tokens(300, vocab, 1);
  const int64_t line = store.prefix_line(int64_t(first.size()), *e);
  ASSERT_EQ(line, 256);

  engine::PrefillOptions po;
  StorePut put = StorePut::kDeclinedShort;
  po.on_anchor = [&](int64_t pos, bool) {
    if (pos == line) put = store.put_prefix(*e, std::span(first).first(size_t(pos)));
  };
  e->reset();
  ASSERT_TRUE(e->prefill(first, po).is_ok());
  ASSERT_EQ(put, StorePut::kStored);
  EXPECT_EQ(store.stats().prefix_puts, 1);

  const std::vector<int32_t> fresh = random_tokens(90, vocab, 2);
  for (int64_t shared : {int64_t(256), int64_t(300), int64_t(280)}) {
    SCOPED_TRACE(shared);
    const std::vector<int32_t> prompt = concat(head(first, shared), fresh);
    const StoreRestore r = resume(store, *e, prompt, 256);
    EXPECT_EQ(r.tainted_from, StateStore::kUntainted);
    EXPECT_TRUE(same_state(test::cold_snapshot(*ref, prompt), take_snapshot(*e)));
  }
  // Below the line nothing is shared with the entry: a miss, and the prompt starts cold.
  const std::vector<int32_t> below = concat(head(first, 200), fresh);
  EXPECT_FALSE(store.offer(below, {}).useful());
  EXPECT_EQ(store.stats().hits, 3);
  EXPECT_EQ(store.stats().hit_tokens, 3 * 256);
}

// Issue 14 §3: the prefix line put later (the server's idle moment after the answer), from a
// copy of the sections taken at the line and the rows still in place while the engine went on
// (decoded above them): the entry resumes as a cold prefill does. A copy at another position
// than the key's length, or a key past the engine, is declined before anything is cloned.
TEST_P(StoreExactness, APrefixPutLaterFromACopyEqualsCold) {
  auto e = make_engine(GetParam());
  auto ref = make_engine(GetParam());
  const int64_t vocab = e->vocab_size();
  StateStore store(StateStoreOptions{.prefix_chunk = 64});
  const std::vector<int32_t> first = random_tokens(300, vocab, 11);
  const int64_t line = store.prefix_line(int64_t(first.size()), *e);
  ASSERT_EQ(line, 256);
  cache::SectionCopy at_line;
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool) {
    if (pos == line) at_line = cache::SectionCopy::capture(*e);
  };
  e->reset();
  ASSERT_TRUE(e->prefill(first, po).is_ok());
  ASSERT_EQ(at_line.position(), line);
  for (int32_t t : random_tokens(4, vocab, 13)) ASSERT_TRUE(e->decode(t).is_ok());
  const std::span<const int32_t> key = std::span(first).first(size_t(line));
  EXPECT_EQ(store.put_prefix_from(*e, key.first(200), at_line), StorePut::kDeclinedShort);
  ASSERT_EQ(store.put_prefix_from(*e, key, at_line), StorePut::kStored);
  EXPECT_EQ(store.stats().prefix_puts, 1);
  const std::vector<int32_t> prompt = concat(head(first, 280), random_tokens(50, vocab, 12));
  const StoreRestore r = resume(store, *e, prompt, 256);
  EXPECT_EQ(r.tainted_from, StateStore::kUntainted);
  EXPECT_TRUE(same_state(test::cold_snapshot(*ref, prompt), take_snapshot(*e)));
}

// A session entry after a prefill and greedy decode steps, then the next turn continues it.
TEST_P(StoreExactness, SessionEntryAfterAGenerationResumesTheNextTurn) {
  auto e = make_engine(GetParam());
  auto ref = make_engine(GetParam());
  const int64_t vocab = e->vocab_size();
  const int64_t g = e->exact_granularity();
  StateStore store(StateStoreOptions{});
  std::vector<int32_t> forwarded = random_tokens(192, vocab, 3);
  e->reset();
  ASSERT_TRUE(e->prefill(forwarded).is_ok());
  for (int step = 0; step < 12; ++step) {  // greedy: the argmax, ties to the lower id
    const auto logits = e->logits();
    int32_t best = 0;
    for (int32_t t = 1; t < int32_t(logits.size()); ++t)
      if (logits[size_t(t)] > logits[size_t(best)]) best = t;
    ASSERT_TRUE(e->decode(best).is_ok());
    forwarded.push_back(best);
  }
  // Decode rows are exact only where the engine is exact at every token (docs/exactness.md).
  const int64_t taint = g > 1 ? 192 : StateStore::kUntainted;
  StateSnapshot stored = take_snapshot(*e);
  ASSERT_EQ(store.put_session(*e, forwarded, taint), StorePut::kStored);

  const std::vector<int32_t> next = concat(forwarded, random_tokens(40, vocab, 4));
  const ResumeOffer o = store.offer(next, {});
  EXPECT_EQ(o.resume_at, 204);
  EXPECT_EQ(o.exact, g == 1);
  scribble(*e);
  auto r = store.take(*e, o);
  ASSERT_TRUE(r.has_value());
  // The restore itself is the stored state, bit for bit, on every model.
  stored.logits.clear();
  EXPECT_TRUE(same_state(stored, take_snapshot(*e)));
  ASSERT_TRUE(e->prefill(std::span(next).subspan(204)).is_ok());
  if (g == 1) {
    EXPECT_EQ(r->tainted_from, StateStore::kUntainted);
    EXPECT_TRUE(same_state(test::cold_snapshot(*ref, next), take_snapshot(*e)));
  } else {
    EXPECT_EQ(r->tainted_from, 192);  // reported: held to the greedy gate only
  }
}

// A session entry that ends off the toy's grid is exact in itself, but what a prefill resumed
// there writes is not a cold prefill's: the offer says so and take reports the line.
TEST_P(StoreExactness, SessionEntryOffTheGridIsReportedAsTainted) {
  auto e = make_engine(GetParam());
  auto ref = make_engine(GetParam());
  const int64_t vocab = e->vocab_size();
  const int64_t g = e->exact_granularity();
  StateStore store(StateStoreOptions{});
  const std::vector<int32_t> a = random_tokens(200, vocab, 5);  // 200 = 12 * 16 + 8
  const std::vector<int32_t> b = random_tokens(208, vocab, 6);  // 208 = 13 * 16
  for (const auto* t : {&a, &b}) {
    e->reset();
    ASSERT_TRUE(e->prefill(*t).is_ok());
    ASSERT_EQ(store.put_session(*e, *t), StorePut::kStored);
  }
  const std::vector<int32_t> tail = random_tokens(50, vocab, 7);
  const StoreRestore ra = resume(store, *e, concat(a, tail), 200);
  if (g == 1) {
    EXPECT_EQ(ra.tainted_from, StateStore::kUntainted);
    EXPECT_TRUE(same_state(test::cold_snapshot(*ref, concat(a, tail)), take_snapshot(*e)));
  } else {
    EXPECT_EQ(ra.tainted_from, 200);
    EXPECT_FALSE(store.offer(concat(a, tail), {}).exact);
    EXPECT_FALSE(same_state(test::cold_snapshot(*ref, concat(a, tail)), take_snapshot(*e)));
  }
  // On the grid the session entry is exact on both models.
  const StoreRestore rb = resume(store, *e, concat(b, tail), 208);
  EXPECT_EQ(rb.tainted_from, StateStore::kUntainted);
  EXPECT_TRUE(same_state(test::cold_snapshot(*ref, concat(b, tail)), take_snapshot(*e)));
}

INSTANTIATE_TEST_SUITE_P(Models, StoreExactness, ::testing::ValuesIn(store_models()),
                         [](const auto& info) { return info.param.name; });

// The rest runs on the toy: fast, and what it checks does not depend on the model.
class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { e_ = make_engine(store_models()[0]); }

  // Prefills `tokens` cold and puts a session entry.
  StorePut put(StateStore& store, const std::vector<int32_t>& tokens,
               std::string_view conversation = {}) {
    e_->reset();
    EXPECT_TRUE(e_->prefill(tokens).is_ok());
    return store.put_session(*e_, tokens, StateStore::kUntainted, conversation);
  }
  std::vector<int32_t> tokens(int64_t n, uint64_t seed) {
    return random_tokens(n, e_->vocab_size(), seed);
  }
  int64_t entry_bytes(int64_t n) { return StateStore::entry_bytes_for(*e_, n); }

  std::unique_ptr<engine::Engine> e_;
};

TEST_F(StateStoreTest, MissesAndAWholePromptEntryIsNotOffered) {
  StateStore store(StateStoreOptions{});
  const auto a = tokens(64, 1);
  EXPECT_FALSE(store.offer(a, {}).useful());  // empty store
  ASSERT_EQ(put(store, a), StorePut::kStored);
  EXPECT_FALSE(store.offer(tokens(100, 2), {}).useful());  // unrelated
  // Equal to the whole prompt: nothing left to prefill for the logits.
  EXPECT_FALSE(store.offer(a, {}).useful());
  EXPECT_FALSE(store.offer(head(a, 32), {}).useful());  // shorter than the entry
  auto longer = concat(a, {1});
  EXPECT_EQ(store.offer(longer, {}).resume_at, 64);
  longer[10] ^= 1;  // one token differs inside the shared part
  EXPECT_FALSE(store.offer(longer, {}).useful());
}

TEST_F(StateStoreTest, TheLongestStoredPrefixWins) {
  StateStore store(StateStoreOptions{});
  const auto a = tokens(160, 1);
  ASSERT_EQ(put(store, head(a, 48)), StorePut::kStored);
  ASSERT_EQ(put(store, head(a, 128)), StorePut::kStored);
  ASSERT_EQ(put(store, head(a, 96)), StorePut::kStored);
  EXPECT_EQ(store.offer(a, {}).resume_at, 128);
  EXPECT_EQ(store.offer(head(a, 100), {}).resume_at, 96);
  EXPECT_EQ(store.offer(head(a, 50), {}).resume_at, 48);
}

// With every key hashing alike, a lookup must still compare the tokens.
TEST_F(StateStoreTest, EqualHashesStillCompareEveryToken) {
  StateStore store(StateStoreOptions{});
  store.test_force_hash(42);
  const auto a = tokens(80, 1);
  const auto b = tokens(80, 2);
  const auto c = tokens(80, 3);
  ASSERT_EQ(put(store, a), StorePut::kStored);
  ASSERT_EQ(put(store, b), StorePut::kStored);  // same hash, other tokens: a new entry
  EXPECT_EQ(put(store, a), StorePut::kAlreadyStored);
  EXPECT_EQ(store.entries(), 2);

  const auto tail = tokens(20, 4);
  EXPECT_FALSE(store.offer(concat(c, tail), {}).useful());
  EXPECT_GT(store.stats().hash_collisions, 0);
  const ResumeOffer ob = store.offer(concat(b, tail), {});
  ASSERT_EQ(ob.resume_at, 80);
  scribble(*e_);
  ASSERT_TRUE(store.take(*e_, ob).has_value());
  auto ref = make_engine(store_models()[0]);
  StateSnapshot want = test::cold_snapshot(*ref, b);
  want.logits.clear();
  EXPECT_TRUE(same_state(want, take_snapshot(*e_)));  // b's state, not a's
}

// Room is made before the clone: the store never holds more than its cap, not even for the
// moment a snapshot exists beside the entry it replaces.
TEST_F(StateStoreTest, RoomIsMadeBeforeTheSnapshotIsCloned) {
  const int64_t one = entry_bytes(64);
  StateStore store(StateStoreOptions{.cache_bytes = 3 * one + one / 2, .entry_bytes = one});
  for (uint64_t s = 1; s <= 3; ++s) ASSERT_EQ(put(store, tokens(64, s)), StorePut::kStored);
  EXPECT_EQ(store.stats().held_bytes, 3 * one);
  ASSERT_EQ(put(store, tokens(64, 4)), StorePut::kStored);
  const StateStoreStats s = store.stats();
  EXPECT_EQ(s.entries, 3);
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.held_bytes, 3 * one);
  // Cloning first and evicting after would have held 4 entries at that moment.
  EXPECT_EQ(s.peak_bytes, 3 * one);
  EXPECT_LE(s.peak_bytes, s.cache_bytes);
}

TEST_F(StateStoreTest, EvictsTheLeastRecentlyUsed) {
  const int64_t one = entry_bytes(64);
  StateStore store(StateStoreOptions{.cache_bytes = 3 * one, .entry_bytes = one});
  const auto a = tokens(64, 1), b = tokens(64, 2), c = tokens(64, 3), d = tokens(64, 4);
  const std::vector<int32_t> tail = {5, 6};
  ASSERT_EQ(put(store, a), StorePut::kStored);
  ASSERT_EQ(put(store, b), StorePut::kStored);
  ASSERT_EQ(put(store, c), StorePut::kStored);
  // A take makes a the most recent; b is now the oldest.
  e_->reset();
  ASSERT_TRUE(store.take(*e_, store.offer(concat(a, tail), {})).has_value());
  ASSERT_EQ(put(store, d), StorePut::kStored);
  EXPECT_TRUE(store.offer(concat(a, tail), {}).useful());
  EXPECT_FALSE(store.offer(concat(b, tail), {}).useful());
  EXPECT_TRUE(store.offer(concat(c, tail), {}).useful());
  EXPECT_TRUE(store.offer(concat(d, tail), {}).useful());
  // A put of stored tokens also makes them recent: c survives, a goes.
  EXPECT_EQ(put(store, c), StorePut::kAlreadyStored);
  ASSERT_EQ(put(store, b), StorePut::kStored);
  EXPECT_FALSE(store.offer(concat(a, tail), {}).useful());
  EXPECT_TRUE(store.offer(concat(c, tail), {}).useful());
}

TEST_F(StateStoreTest, DeclinesAreCountedByReason) {
  const int64_t cap = entry_bytes(100);
  StateStore store(StateStoreOptions{.entry_bytes = cap});
  EXPECT_EQ(put(store, tokens(101, 1)), StorePut::kDeclinedBig);
  EXPECT_EQ(put(store, tokens(100, 1)), StorePut::kStored);
  // The engine forwarded a token the key does not have (or the reverse): no clone.
  const auto a = tokens(64, 2);
  e_->reset();
  ASSERT_TRUE(e_->prefill(a).is_ok());
  EXPECT_EQ(store.put_session(*e_, head(a, 63)), StorePut::kDeclinedShort);
  EXPECT_EQ(store.put_session(*e_, concat(a, {1})), StorePut::kDeclinedShort);
  // A prefix put of a tainted prompt; below its taint line it is exact and accepted.
  EXPECT_EQ(store.put_prefix(*e_, a, /*tainted_from=*/48), StorePut::kDeclinedTainted);
  EXPECT_EQ(store.put_prefix(*e_, a, /*tainted_from=*/64), StorePut::kStored);
  const StateStoreStats s = store.stats();
  EXPECT_EQ(s.declined_big, 1);
  EXPECT_EQ(s.declined_short, 2);
  EXPECT_EQ(s.declined_tainted, 1);
  EXPECT_EQ(s.session_puts, 1);
  EXPECT_EQ(s.prefix_puts, 1);
  EXPECT_EQ(s.entries, 2);
}

TEST_F(StateStoreTest, ADeclineIsLoggedOncePerConversation) {
  StateStore store(StateStoreOptions{.entry_bytes = entry_bytes(50)});
  auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(put(store, tokens(64, 1), "session-a"), StorePut::kDeclinedBig);
  EXPECT_EQ(put(store, tokens(80, 2), "session-a"), StorePut::kDeclinedBig);
  EXPECT_EQ(put(store, tokens(96, 3), "session-a"), StorePut::kDeclinedBig);
  const std::string one = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines(one), 1);
  EXPECT_NE(one.find("64 tokens declined_big"), std::string::npos);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(put(store, tokens(64, 4), "session-b"), StorePut::kDeclinedBig);
  EXPECT_EQ(lines(::testing::internal::GetCapturedStderr()), 1);
  EXPECT_EQ(store.stats().declined_big, 4);
}

TEST_F(StateStoreTest, PrefixLineFollowsTheChunkTheSpacingAndTheEntryCap) {
  StateStore store(StateStoreOptions{.entry_bytes = entry_bytes(200), .prefix_chunk = 64});
  EXPECT_EQ(store.prefix_line(1000, *e_), 192);  // the cap holds 200 tokens
  EXPECT_EQ(store.prefix_line(150, *e_), 128);
  EXPECT_EQ(store.prefix_line(128, *e_), 128);  // the prefill's end, on a line
  EXPECT_EQ(store.prefix_line(63, *e_), 0);
  // A chunk that is not a multiple of the engine's anchor spacing (64): lines of both.
  StateStore odd(StateStoreOptions{.prefix_chunk = 96});
  EXPECT_EQ(odd.prefix_line(500, *e_), 384);
  EXPECT_EQ(odd.prefix_line(191, *e_), 0);
  // An entry cap below the sections alone: no line.
  StateStore tiny(StateStoreOptions{.entry_bytes = entry_bytes(0) - 1});
  EXPECT_EQ(tiny.prefix_line(1000, *e_), 0);
}

TEST_F(StateStoreTest, TakeRefusesAGoneEntryAndAnotherLayout) {
  StateStore store(StateStoreOptions{});
  const auto a = tokens(64, 1);
  ASSERT_EQ(put(store, a), StorePut::kStored);
  const ResumeOffer o = store.offer(concat(a, {1}), {});
  ASSERT_TRUE(o.useful());

  auto q = engine::Engine::create(test::make_tiny_qwen35(core::DType::kF32, core::DType::kF32),
                                  small_engine_options());
  ASSERT_TRUE(q.has_value());
  (*q)->reset();
  ASSERT_TRUE((*q)->prefill(std::vector<int32_t>{1, 2, 3}).is_ok());
  const StateSnapshot before = take_snapshot(**q);
  auto r = store.take(**q, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), core::StatusCode::kInvalidArgument);
  EXPECT_TRUE(same_state(before, take_snapshot(**q)));  // refused before any byte was written

  store.clear();
  EXPECT_EQ(store.held_bytes(), 0);
  auto gone = store.take(*e_, o);
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code(), core::StatusCode::kNotFound);
}

TEST_F(StateStoreTest, ShedGivesBackTheOldestEntriesFirst) {
  StateStore store(StateStoreOptions{});
  const auto a = tokens(64, 1), b = tokens(64, 2);
  ASSERT_EQ(put(store, a), StorePut::kStored);
  ASSERT_EQ(put(store, b), StorePut::kStored);
  EXPECT_EQ(store.level_name(), "store");
  EXPECT_EQ(store.shed(1), entry_bytes(64));
  EXPECT_FALSE(store.offer(concat(a, {1}), {}).useful());
  EXPECT_TRUE(store.offer(concat(b, {1}), {}).useful());
  EXPECT_EQ(store.shed(int64_t(1) << 40), entry_bytes(64));
  EXPECT_EQ(store.shed(1), 0);
  EXPECT_EQ(store.stats().evictions, 2);
}

TEST_F(StateStoreTest, ThePlannerAsksTheStoreAsAnOfferSource) {
  StateStore store(StateStoreOptions{});
  Planner planner;
  planner.add_source(&store);
  const auto a = tokens(64, 1);
  ASSERT_EQ(put(store, a), StorePut::kStored);
  const Plan p = planner.plan(concat(a, tokens(10, 2)), "s", OfferScope::global());
  EXPECT_EQ(tier_of(p.chosen.source), ResumeTier::kRamSnapshot);
  EXPECT_EQ(p.chosen.source, ResumeSource::kStore);
  EXPECT_EQ(p.cached_tokens, 64);
  EXPECT_EQ(p.reread_tokens, 10);
  EXPECT_EQ(store.stats().hits, 0);  // planning counts nothing
}

}  // namespace
}  // namespace anchorage::cache

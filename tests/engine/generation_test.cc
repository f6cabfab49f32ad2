#include "engine/generation.h"

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <vector>

#include "support/state_snapshot.h"
#include "support/toy_architecture.h"

namespace anchorage::engine {
namespace {

using test::random_tokens;
constexpr int64_t kVocab = test::ToyArchitecture::kVocab;

std::unique_ptr<Engine> toy_engine(int64_t capacity = 512) {
  auto e = Engine::create(
      test::make_toy_architecture(5),
      {.capacity = capacity, .prefill_chunk = 64, .anchor_spacing = 64, .n_threads = 1});
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

TEST(Generation, GreedyEqualsTheManualLoop) {
  auto prompt = random_tokens(100, kVocab, 1);
  auto e = toy_engine();
  std::vector<int32_t> streamed;
  GenerationOptions o{.max_tokens = 20};
  o.on_token = [&](int32_t t) {
    streamed.push_back(t);
    return true;
  };
  auto r = generate(*e, prompt, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tokens.size(), 20u);
  EXPECT_EQ(r->tokens, streamed);
  EXPECT_EQ(r->finish, FinishReason::kMaxTokens);
  EXPECT_EQ(r->decode_steps, 19);
  EXPECT_EQ(e->length(), 100 + 19);  // the last token is not decoded

  auto m = toy_engine();
  ASSERT_TRUE(m->prefill(prompt).is_ok());
  std::vector<int32_t> manual;
  for (int i = 0; i < 20; ++i) {
    manual.push_back(Sampler::argmax(m->logits()));
    if (i < 19) {
      ASSERT_TRUE(m->decode(manual.back()).is_ok());
    }
  }
  EXPECT_EQ(r->tokens, manual);
  EXPECT_TRUE(test::same_state(test::take_snapshot(*m), test::take_snapshot(*e)));
}

TEST(Generation, StopsAtAStopTokenTheCallbackAndTheCapacity) {
  auto prompt = random_tokens(100, kVocab, 2);
  auto e = toy_engine();
  auto full = generate(*e, prompt, {.max_tokens = 8});
  ASSERT_TRUE(full.has_value());

  e->reset();
  auto r = generate(*e, prompt, {.max_tokens = 8, .stop_ids = {full->tokens[3]}});
  ASSERT_TRUE(r.has_value());
  // The first occurrence of the stop id ends it (it may occur before index 3).
  size_t first = 0;
  while (full->tokens[first] != full->tokens[3]) ++first;
  EXPECT_EQ(r->tokens,
            std::vector<int32_t>(full->tokens.begin(), full->tokens.begin() + first + 1));
  EXPECT_EQ(r->finish, FinishReason::kStopToken);
  EXPECT_EQ(e->length(), 100 + int64_t(first));

  e->reset();
  GenerationOptions o{.max_tokens = 8};
  o.on_token = [](int32_t) { return false; };
  r = generate(*e, prompt, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tokens.size(), 1u);
  EXPECT_EQ(r->finish, FinishReason::kStopped);

  auto small = toy_engine(105);
  r = generate(*small, prompt, {.max_tokens = 50});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->finish, FinishReason::kCapacity);
  EXPECT_EQ(r->tokens.size(), 6u);
  EXPECT_EQ(small->length(), 105);
}

TEST(Generation, ErrorsBeforeAnythingRuns) {
  auto e = toy_engine(64);
  EXPECT_FALSE(generate(*e, random_tokens(65, kVocab, 1), {}).has_value());
  EXPECT_FALSE(generate(*e, {}, {}).has_value());
  GenerationOptions bad{.max_tokens = 4};
  bad.sampling.top_p = 0.0;
  EXPECT_FALSE(generate(*e, random_tokens(4, kVocab, 1), bad).has_value());
  EXPECT_EQ(e->length(), 0);
  auto zero = generate(*e, random_tokens(4, kVocab, 1), {.max_tokens = 0});
  ASSERT_TRUE(zero.has_value());
  EXPECT_TRUE(zero->tokens.empty());
  EXPECT_EQ(e->length(), 4);
}

TEST(Generation, SeededSamplingRepeatsAcrossEngines) {
  auto prompt = random_tokens(80, kVocab, 3);
  GenerationOptions o{.max_tokens = 40};
  o.sampling = {.temperature = 1.2, .top_k = 20, .top_p = 0.95, .min_p = 0.01, .seed = 123};
  auto a = toy_engine();
  auto b = toy_engine();
  auto ra = generate(*a, prompt, o);
  auto rb = generate(*b, prompt, o);
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  EXPECT_EQ(ra->tokens, rb->tokens);
  o.sampling.seed = 124;
  a->reset();
  auto rc = generate(*a, prompt, o);
  ASSERT_TRUE(rc.has_value());
  EXPECT_NE(ra->tokens, rc->tokens);
}

}  // namespace
}  // namespace anchorage::engine

namespace anchorage::engine {
namespace {

// allowed_next: greedy picks the best logit among the allowed ids (the manual argmax over
// them), a single allowed id is taken as is, and the engine's logits stay the model's own.
TEST(Generation, AllowedNextRestrictsEveryStep) {
  auto prompt = random_tokens(50, kVocab, 3);
  const std::vector<int32_t> evens = [] {
    std::vector<int32_t> v;
    for (int32_t i = 0; i < int32_t(kVocab); i += 2) v.push_back(i);
    return v;
  }();
  const int32_t forced = 7;
  auto e = toy_engine();
  std::vector<std::vector<float>> seen_logits;
  GenerationOptions o{.max_tokens = 8};
  o.allowed_next = [&](std::span<const int32_t> sampled) -> std::span<const int32_t> {
    if (sampled.size() == 3) return std::span<const int32_t>(&forced, 1);
    return evens;
  };
  o.on_token = [&](int32_t) {
    seen_logits.emplace_back(e->logits().begin(), e->logits().end());
    return true;
  };
  auto r = generate(*e, prompt, o);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->tokens.size(), 8u);

  // The same steps by hand on a second engine.
  auto m = toy_engine();
  ASSERT_TRUE(m->prefill(prompt).is_ok());
  for (size_t i = 0; i < 8; ++i) {
    const std::span<const float> logits = m->logits();
    ASSERT_EQ(0, std::memcmp(logits.data(), seen_logits[i].data(), logits.size_bytes()));
    int32_t want = forced;
    if (i != 3) {
      want = evens[0];
      for (int32_t id : evens)
        if (logits[size_t(id)] > logits[size_t(want)]) want = id;
    }
    EXPECT_EQ(r->tokens[i], want) << "step " << i;
    EXPECT_TRUE(i == 3 || want % 2 == 0);
    if (i < 7) {
      ASSERT_TRUE(m->decode(want).is_ok());
    }
  }
}

}  // namespace
}  // namespace anchorage::engine

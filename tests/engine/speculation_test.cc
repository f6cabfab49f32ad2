// Invariant: speculation changes no bit. A verify block writes the logits, sections and view
// rows that one-token decodes write (batch-invariant kernels), and a generation with any
// drafter — one whose drafts are all chosen, none, or a random prefix — gives the same tokens,
// the same logits for each (hence logprobs), the same sampler draws and the same final state as
// drafting off, with stop tokens, callbacks, max_tokens and the capacity cutting inside a block.
// The toy (exact on its 16-token grid only) refuses verify blocks and generates undrafted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/rng.h"
#include "engine/drafter.h"
#include "engine/generation.h"
#include "engine/lookup_drafter.h"
#include "engine/sampler.h"
#include "support/drafted_run.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

class Speculation : public ::testing::TestWithParam<ModelVariant> {};

constexpr int64_t kPrompt = 48;
const engine::EngineOptions kOpts{.capacity = 256, .prefill_chunk = 64, .n_threads = 2};

std::vector<float> copy(std::span<const float> s) {
  return {s.begin(), s.end()};
}

TEST_P(Speculation, VerifyBlockWritesTheBitsOfOneTokenDecodes) {
  const ModelVariant& v = GetParam();
  auto e = make_engine(v, kOpts);
  const int64_t vocab = e->vocab_size();
  const std::vector<int32_t> prompt = random_tokens(kPrompt, vocab, 3);
  const std::vector<int32_t> next = random_tokens(9, vocab, 4);
  ASSERT_TRUE(e->prefill(prompt).is_ok());
  if (e->exact_granularity() != 1) {
    EXPECT_EQ(e->verify_block(next).code(), core::StatusCode::kUnsupported);
    return;
  }
  auto d = make_engine(v, kOpts);  // one token at a time
  ASSERT_TRUE(d->prefill(prompt).is_ok());
  std::vector<std::vector<float>> step_logits;
  std::vector<StateSnapshot> step_state;
  for (int32_t t : next) {
    ASSERT_TRUE(d->decode(t).is_ok());
    step_logits.push_back(copy(d->logits()));
    step_state.push_back(take_snapshot(*d));
  }
  // Every commit length, from the same block.
  for (int64_t n = 1; n <= int64_t(next.size()); ++n) {
    auto b = make_engine(v, kOpts);
    ASSERT_TRUE(b->prefill(prompt).is_ok());
    ASSERT_TRUE(b->verify_block(next).is_ok());
    for (size_t i = 0; i < next.size(); ++i) {
      b->show_block_row(int64_t(i));
      EXPECT_TRUE(same_bits(step_logits[i], copy(b->logits()))) << "row " << i;
    }
    b->commit_block(n);
    EXPECT_EQ(b->length(), kPrompt + n);
    EXPECT_TRUE(same_state(step_state[size_t(n - 1)], take_snapshot(*b))) << "commit " << n;
  }
}

// Proposes the reference generation's next tokens: all of them (kAccept), none right
// (kReject), or a random-length right prefix followed by wrong or random tokens (kRandom).
class OracleDrafter : public engine::Drafter {
 public:
  enum Mode { kAccept, kReject, kRandom };
  OracleDrafter(std::vector<int32_t> ref, int64_t context0, int64_t vocab, Mode mode)
      : ref_(std::move(ref)), context0_(context0), vocab_(vocab), mode_(mode), rng_(99) {}

  void propose(std::span<const int32_t> context, int64_t max_tokens,
               std::vector<int32_t>* out) override {
    out->clear();
    const int64_t j = int64_t(context.size()) - context0_;  // index of the next reference token
    const int64_t right = mode_ == kAccept   ? max_tokens
                          : mode_ == kReject ? 0
                                             : int64_t(rng_.next_u64() % uint64_t(max_tokens + 1));
    for (int64_t i = 0; i < max_tokens; ++i) {
      const int64_t r = j + i;
      const int32_t truth = r < int64_t(ref_.size()) ? ref_[size_t(r)] : 0;
      int32_t t = truth;
      if (i == right) t = int32_t((truth + 1) % vocab_);  // the first wrong one
      if (i > right) t = int32_t(rng_.next_u64() % uint64_t(vocab_));
      out->push_back(t);
    }
    ++proposals;
  }
  void observe(int64_t proposed, int64_t accepted) override {
    EXPECT_GE(proposed, accepted);
    observed += accepted;
  }
  int64_t proposals = 0;
  int64_t observed = 0;

 private:
  std::vector<int32_t> ref_;
  int64_t context0_;
  int64_t vocab_;
  Mode mode_;
  core::Rng rng_;
};

using Run = DraftedRun;

Run run(const ModelVariant& v, const engine::EngineOptions& eo, const std::vector<int32_t>& prompt,
        const engine::GenerationOptions& o, engine::Drafter* drafter, int64_t stop_after = -1) {
  return run_drafted(v, eo, prompt, o, drafter, 6, stop_after);
}

void expect_same(const Run& plain, const Run& drafted) {
  expect_same_run(plain, drafted);
}

void check_generation(const ModelVariant& v, const engine::SamplingParams& sampling) {
  auto probe = v.make();
  const int64_t vocab = probe->vocab_size();
  const bool exact = probe->exact_granularity() == 1;
  const std::vector<int32_t> prompt = random_tokens(kPrompt, vocab, 5);
  engine::GenerationOptions o{.max_tokens = 40, .sampling = sampling};
  const Run plain = run(v, kOpts, prompt, o, nullptr);
  const std::vector<int32_t>& ref = plain.result.tokens;
  ASSERT_EQ(ref.size(), 40u);

  for (auto mode : {OracleDrafter::kAccept, OracleDrafter::kReject, OracleDrafter::kRandom}) {
    SCOPED_TRACE(testing::Message() << "drafter mode " << int(mode));
    OracleDrafter drafter(ref, kPrompt, vocab, mode);
    const Run drafted = run(v, kOpts, prompt, o, &drafter);
    expect_same(plain, drafted);
    if (!exact) {
      EXPECT_EQ(drafted.result.verify_blocks, 0);
      continue;
    }
    EXPECT_GT(drafted.result.verify_blocks, 0);
    EXPECT_EQ(drafted.result.accepted_tokens, drafter.observed);
    if (mode == OracleDrafter::kReject) {
      EXPECT_EQ(drafted.result.accepted_tokens, 0);
    }
    if (mode == OracleDrafter::kAccept) {
      EXPECT_LT(drafted.result.verify_blocks, drafted.result.decode_steps / 3);
    }

    // The end state is a cold prefill's of every forwarded token, and resumes as one.
    std::vector<int32_t> forwarded = prompt;
    forwarded.insert(forwarded.end(), ref.begin(), ref.begin() + drafted.result.decode_steps);
    auto cold = make_engine(v, kOpts);
    EXPECT_TRUE(same_state(cold_snapshot(*cold, forwarded), drafted.state));
    const std::vector<int32_t> more = random_tokens(7, vocab, 6);
    auto resumed = make_engine(v, kOpts);
    scribble(*resumed);
    restore_snapshot(*resumed, drafted.state);
    ASSERT_TRUE(resumed->prefill(more).is_ok());
    forwarded.insert(forwarded.end(), more.begin(), more.end());
    EXPECT_TRUE(same_state(cold_snapshot(*cold, forwarded), take_snapshot(*resumed)));
  }

  // The real drafter: prompt lookup over the sequence itself.
  engine::LookupDrafter lookup({.draft_max = 6, .min_match = 2});
  const Run looked_up = run(v, kOpts, prompt, o, &lookup);
  expect_same(plain, looked_up);
  std::printf("[ lookup   ] %s: %lld blocks, %lld drafted, %lld accepted\n", v.name.c_str(),
              (long long)looked_up.result.verify_blocks, (long long)looked_up.result.drafted_tokens,
              (long long)looked_up.result.accepted_tokens);

  // Ends inside a block: a stop id, a callback (a stop string), max_tokens, the capacity.
  OracleDrafter accept(ref, kPrompt, vocab, OracleDrafter::kAccept);
  engine::GenerationOptions stop = o;
  stop.stop_ids = {ref[13]};
  expect_same(run(v, kOpts, prompt, stop, nullptr), run(v, kOpts, prompt, stop, &accept));
  expect_same(run(v, kOpts, prompt, o, nullptr, 17), run(v, kOpts, prompt, o, &accept, 17));
  engine::GenerationOptions shorter = o;
  shorter.max_tokens = 11;
  expect_same(run(v, kOpts, prompt, shorter, nullptr), run(v, kOpts, prompt, shorter, &accept));
  engine::EngineOptions tight = kOpts;
  tight.capacity = kPrompt + 23;
  const Run capped = run(v, tight, prompt, o, nullptr);
  EXPECT_EQ(capped.result.finish, engine::FinishReason::kCapacity);
  expect_same(capped, run(v, tight, prompt, o, &accept));
}

TEST_P(Speculation, GreedyDraftedGenerationIsDecodesBitForBit) {
  check_generation(GetParam(), {});
}

TEST_P(Speculation, SeededSampledDraftedGenerationIsDecodesBitForBit) {
  check_generation(GetParam(),
                   {.temperature = 0.9, .top_k = 50, .top_p = 0.95, .min_p = 0.01, .seed = 7});
}

TEST(LookupDrafter, ProposesWhatFollowedTheLongestLatestMatch) {
  using engine::LookupDrafter;
  //                               0  1  2  3  4  5  6  7  8  9 10 11
  const std::vector<int32_t> c = {5, 1, 2, 3, 9, 8, 2, 3, 7, 1, 2, 3};
  // "1 2 3" occurs ending at 4 (followed by 9); "2 3" alone also ends at 8 (later, shorter).
  EXPECT_EQ(LookupDrafter::longest_match_end(c, 2, 32), 4);
  EXPECT_EQ(LookupDrafter::longest_match_end(c, 4, 32), -1);
  EXPECT_EQ(LookupDrafter::longest_match_end(c, 2, 2), 8);  // capped: the latest of length 2
  LookupDrafter d({.draft_max = 4, .min_match = 2});
  std::vector<int32_t> out;
  d.propose(c, 3, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{9, 8}));  // next_len starts at draft_max / 2
  d.observe(2, 2);
  d.propose(c, 3, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{9, 8, 2}));  // doubled, capped by max_tokens
  d.observe(3, 0);
  d.propose(c, 3, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{9}));
  d.propose(std::vector<int32_t>{1, 2, 3, 4}, 3, &out);
  EXPECT_TRUE(out.empty());
  // A loop: the latest match ends two tokens before the end; the draft goes on with period 2.
  LookupDrafter loop({.draft_max = 10, .min_match = 2});
  loop.propose(std::vector<int32_t>{7, 1, 2, 1, 2, 1, 2}, 9, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 1, 2, 1}));
}

INSTANTIATE_TEST_SUITE_P(Models, Speculation, ::testing::ValuesIn(invariant_variants()),
                         variant_name);

}  // namespace
}  // namespace anchorage::test

// The lookup drafter's fallback to the persistent suffix store (docs/speculation.md,
// docs/suffix-store.md): when the request's own context has no match, the drafter drafts from
// the store, and a generation drafted that way gives the same tokens, the same logits for each
// (memcmp) and the same final state as drafting off — with a store that holds the right
// continuation (every draft chosen) and one that holds a damaged one (drafts rejected).
#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "cache/suffix_store.h"
#include "core/mem_fs.h"
#include "core/sha256.h"
#include "engine/generation.h"
#include "engine/lookup_drafter.h"
#include "support/drafted_run.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

const engine::EngineOptions kOpts{.capacity = 256, .prefill_chunk = 64, .n_threads = 2};

DraftedRun run(const ModelVariant& v, const std::vector<int32_t>& prompt,
               const engine::GenerationOptions& o, engine::Drafter* drafter) {
  return run_drafted(v, kOpts, prompt, o, drafter, 8);
}

// A store on a MemFs holding one request: prompt, then output.
std::unique_ptr<cache::SuffixStore> store_with(core::MemFs& fs, const std::vector<int32_t>& prompt,
                                               const std::vector<int32_t>& output) {
  auto store = cache::SuffixStore::open(fs, "/c", core::sha256(std::string_view("tok")), {});
  EXPECT_TRUE(store.has_value());
  if (!store) return nullptr;
  (*store)->add_request(prompt, output);
  (*store)->wait_idle();
  return std::move(*store);
}

void check(const ModelVariant& v, const engine::SamplingParams& sampling) {
  auto probe = v.make();
  if (probe->exact_granularity() != 1) GTEST_SKIP() << "no verify blocks on this architecture";
  const int64_t vocab = probe->vocab_size();
  // A prompt with no repeated pair, so the request's own context drafts nothing at first.
  const std::vector<int32_t> prompt = random_tokens(40, vocab, 11);
  const engine::GenerationOptions o{.max_tokens = 32, .sampling = sampling};
  const DraftedRun plain = run(v, prompt, o, nullptr);
  const std::vector<int32_t>& ref = plain.result.tokens;
  ASSERT_EQ(ref.size(), 32u);
  const engine::LookupDrafterOptions lookup{.draft_max = 8, .min_match = 3};

  // Drafts from a store that saw this prompt with `continuation`: the run equals drafting off.
  auto from_store = [&](const std::vector<int32_t>& continuation) {
    core::MemFs fs;
    auto store = store_with(fs, prompt, continuation);
    EXPECT_NE(store, nullptr);
    engine::LookupDrafter drafter(lookup, store.get());
    const DraftedRun drafted = run(v, prompt, o, &drafter);
    expect_same_run(plain, drafted);
    return std::pair(drafted.result, drafter.fallback_stats());
  };
  // The store saw this request before: the continuation is drafted from it and chosen.
  const auto [right, f] = from_store(ref);
  EXPECT_GT(f.blocks, 0);
  EXPECT_GT(f.accepted_tokens, 0);
  EXPECT_LE(f.accepted_tokens, right.accepted_tokens);
  EXPECT_GT(right.accepted_tokens, int64_t(ref.size()) / 2);  // most tokens drafted

  // The store holds a damaged continuation: drafts are rejected where it differs.
  std::vector<int32_t> damaged = ref;
  for (size_t i = 4; i < damaged.size(); i += 5) damaged[i] = (damaged[i] + 1) % int32_t(vocab);
  const engine::FallbackDraftStats wrong = from_store(damaged).second;
  EXPECT_GT(wrong.blocks, 0);
  EXPECT_LT(wrong.accepted_tokens, wrong.drafted_tokens);

  // An empty store drafts nothing and counts nothing.
  core::MemFs fs3;
  auto empty = cache::SuffixStore::open(fs3, "/c", core::sha256(std::string_view("tok")), {});
  ASSERT_TRUE(empty.has_value());
  (*empty)->wait_idle();
  engine::LookupDrafter from_empty(lookup, empty->get());
  expect_same_run(plain, run(v, prompt, o, &from_empty));
  EXPECT_EQ(from_empty.fallback_stats().blocks, 0);
}

class SuffixDraft : public ::testing::TestWithParam<ModelVariant> {};

TEST_P(SuffixDraft, GreedyDraftsFromTheStoreAreDecodesBitForBit) {
  check(GetParam(), {});
}

TEST_P(SuffixDraft, SeededSampledDraftsFromTheStoreAreDecodesBitForBit) {
  check(GetParam(), {.temperature = 0.9, .top_k = 50, .top_p = 0.95, .min_p = 0.01, .seed = 7});
}

// The request's own context comes first; the store only when it has no match.
TEST(SuffixDraft, OwnContextFirstThenTheStoreAndNothingBelowMinMatch) {
  core::MemFs fs;
  auto store = store_with(fs, {}, {1, 2, 3, 40, 41, 42, 43});
  ASSERT_NE(store, nullptr);
  engine::LookupDrafter d({.draft_max = 8, .min_match = 3}, store.get());
  std::vector<int32_t> out;
  // "1 2 3" occurs in the context (followed by 9): the context wins.
  d.propose(std::vector<int32_t>{1, 2, 3, 9, 9, 1, 2, 3}, 4, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{9, 9, 1, 2}));
  // Not in the context: the store's continuation.
  d.propose(std::vector<int32_t>{7, 8, 1, 2, 3}, 4, &out);
  EXPECT_EQ(out, (std::vector<int32_t>{40, 41, 42, 43}));
  d.observe(4, 2);
  EXPECT_EQ(d.fallback_stats().blocks, 1);
  EXPECT_EQ(d.fallback_stats().drafted_tokens, 4);
  EXPECT_EQ(d.fallback_stats().accepted_tokens, 2);
  // A match of two tokens is below min_match in both: no draft.
  d.propose(std::vector<int32_t>{7, 8, 9, 2, 3}, 4, &out);
  EXPECT_TRUE(out.empty());
  d.observe(0, 0);  // not a store block: nothing counted
  EXPECT_EQ(d.fallback_stats().blocks, 1);
}

INSTANTIATE_TEST_SUITE_P(Models, SuffixDraft, ::testing::ValuesIn(invariant_variants()),
                         variant_name);

}  // namespace
}  // namespace anchorage::test

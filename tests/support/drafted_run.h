// A generation recorded for the speculation tests (tests/engine/speculation_test.cc,
// tests/cache/suffix_draft_test.cc): its result, the logits each token was chosen from and the
// engine's final state, and the check that a drafted run equals drafting off bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/drafter.h"
#include "engine/generation.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {

struct DraftedRun {
  engine::GenerationResult result;
  std::vector<std::vector<float>> logits;  // what each token was chosen from
  StateSnapshot state;
};

// Generates on a fresh engine of the variant with `drafter` (null: drafting off) and up to
// draft_max drafts a block; the callback stops after stop_after tokens (a stop string, as the
// server cuts one; -1: never).
DraftedRun run_drafted(const ModelVariant& v, const engine::EngineOptions& eo,
                       const std::vector<int32_t>& prompt, engine::GenerationOptions o,
                       engine::Drafter* drafter, int64_t draft_max, int64_t stop_after = -1);

// The same tokens, finish, decode steps, logits (memcmp) and final state.
void expect_same_run(const DraftedRun& plain, const DraftedRun& drafted);

}  // namespace anchorage::test

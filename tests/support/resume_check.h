// expect_exact_resume: the check every tier on the disk shares — its offer for a prompt is at
// `expect_at`, of source `source`, exact and with a read cost; restoring it (into a scribbled
// engine, or over `rows_in_place` rows already there) and prefilling the rest leaves the engine
// exactly as a cold prefill of the prompt does (memcmp of logits, sections and rows).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "cache/resume_offer.h"
#include "engine/engine.h"
#include "support/state_snapshot.h"

namespace anchorage::test {

// Tier: an OfferSource with restore(engine, prompt, offer, rows_in_place) -> core::Status.
template <class Tier>
void expect_exact_resume(Tier& tier, engine::Engine& e, engine::Engine& ref,
                         const std::vector<int32_t>& prompt, int64_t expect_at,
                         cache::ResumeSource source, int64_t rows_in_place = 0) {
  const cache::ResumeOffer o = tier.offer(prompt, {});
  ASSERT_EQ(o.resume_at, expect_at);
  ASSERT_EQ(o.source, source);
  EXPECT_TRUE(o.exact);
  EXPECT_GT(o.restore_ms, 0.0);
  if (rows_in_place == 0) scribble(e);
  ASSERT_TRUE(tier.restore(e, prompt, o, rows_in_place).is_ok());
  ASSERT_EQ(e.length(), expect_at);
  ASSERT_TRUE(e.prefill(std::span(prompt).subspan(size_t(expect_at))).is_ok());
  const StateSnapshot want = cold_snapshot(ref, prompt);
  const StateSnapshot got = take_snapshot(e);
  EXPECT_TRUE(same_state(want, got));
  EXPECT_TRUE(same_bits(want.logits, got.logits));
}

}  // namespace anchorage::test

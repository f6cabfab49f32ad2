// Planner: the latest resume wins, ties go to the source registered first (resident, then
// park/pin, then the store), offers that leave nothing to prefill are never chosen, and the
// re-read estimate follows a running median of measured prefill rates after a stated prior.
#include "cache/planner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace anchorage::cache {
namespace {

// Offers a fixed position (clamped by nothing: the planner must check), and records the
// questions it was asked.
class FakeSource final : public OfferSource {
 public:
  FakeSource(ResumeSource source, int64_t at) : source_(source), at_(at) {}
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const override {
    ++asked;
    last_session = std::string(session);
    last_prompt_tokens = int64_t(prompt.size());
    ResumeOffer o;
    if (at_ <= 0) return o;
    o.resume_at = at_;
    o.source = source_;
    o.restore_bytes = at_ * 10;
    o.tag = at_;
    o.restore_ms = restore_ms;
    return o;
  }
  void set(int64_t at) { at_ = at; }
  double restore_ms = 0.0;  // > 0: a read (the disk tiers)

  mutable int asked = 0;
  mutable std::string last_session;
  mutable int64_t last_prompt_tokens = 0;

 private:
  ResumeSource source_;
  int64_t at_;
};

const std::vector<int32_t> kPrompt(1000, 7);

struct Tiers {
  FakeSource resident{ResumeSource::kAnchor, 0};
  FakeSource park{ResumeSource::kPark, 0};
  FakeSource store{ResumeSource::kStore, 0};
  Planner planner;
  Tiers() {
    planner.add_source(&resident);
    planner.add_source(&park);
    planner.add_source(&store);
  }
};

// A read is taken only when the re-read it saves over the best offer before it costs more than
// the read: at the prior 500 tok/s, 100 more tokens are 200 ms of prefill.
TEST(Planner, AReadIsTakenOnlyWhenThePrefillItSavesCostsMore) {
  Tiers t;
  FakeSource disk{ResumeSource::kDisk, 0};
  t.planner.add_source(&disk);
  t.resident.set(500);
  disk.set(600);
  disk.restore_ms = 150.0;
  Plan p = t.planner.plan(kPrompt, "s");
  EXPECT_EQ(p.chosen.source, ResumeSource::kDisk);
  EXPECT_EQ(p.cached_tokens, 600);
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, t.planner.eta_ms(400) + 150.0);  // the read included
  disk.restore_ms = 250.0;  // more than the 200 ms it saves
  p = t.planner.plan(kPrompt, "s");
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.cached_tokens, 500);
  // Against a cold start it saves 600 tokens (1.2 s): taken.
  t.resident.set(0);
  p = t.planner.plan(kPrompt, "s");
  EXPECT_EQ(p.chosen.source, ResumeSource::kDisk);
}

TEST(Planner, ColdWhenNoSourceHelps) {
  Tiers t;
  const Plan p = t.planner.plan(kPrompt, "s1");
  EXPECT_EQ(p.chosen_index, -1);
  EXPECT_EQ(tier_of(p.chosen.source), ResumeTier::kNone);
  EXPECT_EQ(p.chosen.source, ResumeSource::kCold);
  EXPECT_EQ(p.cached_tokens, 0);
  EXPECT_EQ(p.reread_tokens, 1000);
  EXPECT_EQ(p.offers.size(), 3u);
  EXPECT_EQ(t.store.asked, 1);
  EXPECT_EQ(t.store.last_session, "s1");
  EXPECT_EQ(t.store.last_prompt_tokens, 1000);
}

TEST(Planner, TheLatestResumeWins) {
  Tiers t;
  t.resident.set(512);
  t.park.set(600);
  t.store.set(700);
  Plan p = t.planner.plan(kPrompt, {});
  EXPECT_EQ(p.chosen_index, 2);
  EXPECT_EQ(p.chosen.source, ResumeSource::kStore);
  EXPECT_EQ(p.cached_tokens, 700);
  EXPECT_EQ(p.reread_tokens, 300);
  ASSERT_EQ(p.offers.size(), 3u);
  EXPECT_EQ(p.offers[0].resume_at, 512);  // every offer is kept for the peek route
  EXPECT_EQ(p.offers[1].resume_at, 600);
  t.resident.set(800);
  p = t.planner.plan(kPrompt, {});
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.chosen.tag, 800);
}

TEST(Planner, TiesGoToTheSourceRegisteredFirst) {
  Tiers t;
  t.resident.set(640);
  t.park.set(640);
  t.store.set(640);
  EXPECT_EQ(t.planner.plan(kPrompt, {}).chosen.source, ResumeSource::kAnchor);
  // The park beats the store on a tie, the store wins only when strictly later.
  t.resident.set(0);
  EXPECT_EQ(t.planner.plan(kPrompt, {}).chosen.source, ResumeSource::kPark);
  t.store.set(641);
  EXPECT_EQ(t.planner.plan(kPrompt, {}).chosen.source, ResumeSource::kStore);
}

TEST(Planner, AnOfferMustLeaveATokenToPrefill) {
  Tiers t;
  t.resident.set(900);
  t.store.set(1000);  // the whole prompt: no logits to compute from
  Plan p = t.planner.plan(kPrompt, {});
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.cached_tokens, 900);
  t.store.set(999);
  p = t.planner.plan(kPrompt, {});
  EXPECT_EQ(p.chosen.source, ResumeSource::kStore);
  EXPECT_EQ(p.reread_tokens, 1);
}

TEST(Planner, EtaUsesThePriorThenTheMedianRate) {
  Planner planner(
      PlannerOptions{.prior_tokens_per_s = 500.0, .min_prefill_tokens = 256, .window = 3});
  EXPECT_DOUBLE_EQ(planner.tokens_per_s(), 500.0);
  EXPECT_DOUBLE_EQ(planner.eta_ms(1000), 2000.0);
  EXPECT_DOUBLE_EQ(planner.eta_ms(0), 0.0);
  planner.note_prefill(100, 1'000'000);  // too short to say anything: ignored
  EXPECT_EQ(planner.measured_prefills(), 0);
  planner.note_prefill(1000, 1'000'000'000);  // 1,000 tok/s
  EXPECT_DOUBLE_EQ(planner.tokens_per_s(), 1000.0);
  planner.note_prefill(4000, 1'000'000'000);  // 4,000 tok/s: the median of two is the mean
  EXPECT_DOUBLE_EQ(planner.tokens_per_s(), 2500.0);
  planner.note_prefill(2000, 1'000'000'000);  // 1,000 / 4,000 / 2,000 -> 2,000
  EXPECT_DOUBLE_EQ(planner.tokens_per_s(), 2000.0);
  EXPECT_DOUBLE_EQ(planner.eta_ms(500), 250.0);
  // The window keeps the last three: 4,000 / 2,000 / 100,000 -> 4,000; an outlier moves the
  // median by one place, not by its size.
  planner.note_prefill(100'000, 1'000'000'000);
  EXPECT_DOUBLE_EQ(planner.tokens_per_s(), 4000.0);
  EXPECT_EQ(planner.measured_prefills(), 4);
}

TEST(Planner, ThePlanCarriesTheEstimate) {
  Tiers t;
  t.park.set(600);
  const Plan p = t.planner.plan(kPrompt, {});
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, t.planner.eta_ms(400));
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, 800.0);  // the default prior: 500 tok/s
}

}  // namespace
}  // namespace anchorage::cache

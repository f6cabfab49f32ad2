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
  Plan p = t.planner.plan(kPrompt, "s", OfferScope::global());
  EXPECT_EQ(p.chosen.source, ResumeSource::kDisk);
  EXPECT_EQ(p.cached_tokens, 600);
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, t.planner.eta_ms(400) + 150.0);  // the read included
  disk.restore_ms = 250.0;  // more than the 200 ms it saves
  p = t.planner.plan(kPrompt, "s", OfferScope::global());
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.cached_tokens, 500);
  // Against a cold start it saves 600 tokens (1.2 s): taken.
  t.resident.set(0);
  p = t.planner.plan(kPrompt, "s", OfferScope::global());
  EXPECT_EQ(p.chosen.source, ResumeSource::kDisk);
}

TEST(Planner, ColdWhenNoSourceHelps) {
  Tiers t;
  const Plan p = t.planner.plan(kPrompt, "s1", OfferScope::global());
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
  Plan p = t.planner.plan(kPrompt, {}, OfferScope::global());
  EXPECT_EQ(p.chosen_index, 2);
  EXPECT_EQ(p.chosen.source, ResumeSource::kStore);
  EXPECT_EQ(p.cached_tokens, 700);
  EXPECT_EQ(p.reread_tokens, 300);
  ASSERT_EQ(p.offers.size(), 3u);
  EXPECT_EQ(p.offers[0].resume_at, 512);  // every offer is kept for the peek route
  EXPECT_EQ(p.offers[1].resume_at, 600);
  t.resident.set(800);
  p = t.planner.plan(kPrompt, {}, OfferScope::global());
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.chosen.tag, 800);
}

TEST(Planner, TiesGoToTheSourceRegisteredFirst) {
  Tiers t;
  t.resident.set(640);
  t.park.set(640);
  t.store.set(640);
  EXPECT_EQ(t.planner.plan(kPrompt, {}, OfferScope::global()).chosen.source, ResumeSource::kAnchor);
  // The park beats the store on a tie, the store wins only when strictly later.
  t.resident.set(0);
  EXPECT_EQ(t.planner.plan(kPrompt, {}, OfferScope::global()).chosen.source, ResumeSource::kPark);
  t.store.set(641);
  EXPECT_EQ(t.planner.plan(kPrompt, {}, OfferScope::global()).chosen.source, ResumeSource::kStore);
}

TEST(Planner, AnOfferMustLeaveATokenToPrefill) {
  Tiers t;
  t.resident.set(900);
  t.store.set(1000);  // the whole prompt: no logits to compute from
  Plan p = t.planner.plan(kPrompt, {}, OfferScope::global());
  EXPECT_EQ(p.chosen.source, ResumeSource::kAnchor);
  EXPECT_EQ(p.cached_tokens, 900);
  t.store.set(999);
  p = t.planner.plan(kPrompt, {}, OfferScope::global());
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
  const Plan p = t.planner.plan(kPrompt, {}, OfferScope::global());
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, t.planner.eta_ms(400));
  EXPECT_DOUBLE_EQ(p.reread_eta_ms, 800.0);  // the default prior: 500 tok/s
}

}  // namespace
}  // namespace anchorage::cache

namespace anchorage::cache {
namespace {

// Offers the latest of its positions below the prompt's end, as the tiers do.
class LadderSource final : public OfferSource {
 public:
  explicit LadderSource(std::vector<int64_t> at) : at_(std::move(at)) {}
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view) const override {
    ResumeOffer o;
    for (const int64_t a : at_)
      if (a < int64_t(prompt.size()) && a > o.resume_at) o = ResumeOffer{a, ResumeSource::kStore};
    return o;
  }

 private:
  std::vector<int64_t> at_;
};

std::vector<int32_t> counting(int n, int32_t from) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

// Under a tenant scope the planner takes only states the tenant made, and asks the tier again
// below one it did not make, so a state of another tenant neither shows nor hides one's own.
TEST(Planner, TenantScopeOffersOnlyTheTenantsOwnStates) {
  const std::vector<int32_t> prompt = counting(1000, 5);
  LadderSource tier({200, 300, 700});
  Planner planner;
  planner.add_source(&tier);
  TenantLedger ledger;
  const int64_t a_made[] = {300, 700};
  const int64_t b_made[] = {200};
  ledger.record("a", prompt, a_made);
  ledger.record("b", prompt, b_made);
  EXPECT_EQ(planner.plan(prompt, {}, OfferScope::global()).chosen.resume_at, 700);
  EXPECT_EQ(planner.plan(prompt, {}, OfferScope::tenant(ledger, "a")).chosen.resume_at, 700);
  EXPECT_EQ(planner.plan(prompt, {}, OfferScope::tenant(ledger, "b")).chosen.resume_at, 200);
  const Plan c = planner.plan(prompt, {}, OfferScope::tenant(ledger, "c"));
  EXPECT_EQ(c.chosen.resume_at, 0);
  EXPECT_EQ(c.chosen_index, -1);
  // Another prompt with the same length but other tokens: b's key was of b's tokens.
  const std::vector<int32_t> other = counting(1000, 6);
  EXPECT_EQ(planner.plan(other, {}, OfferScope::tenant(ledger, "b")).chosen.resume_at, 0);
}

TEST(TenantLedger, KeysAreSaltedByTenantAndBounded) {
  const std::vector<int32_t> t = counting(50, 1);
  TenantLedger ledger(/*max_keys=*/3);
  const int64_t lens[] = {10, 20, 0, 51, 20};  // 0 and 51 are outside: ignored
  ledger.record("x", t, lens);
  EXPECT_EQ(ledger.size(), 2u);
  EXPECT_TRUE(ledger.made("x", std::span<const int32_t>(t).first(10)));
  EXPECT_TRUE(ledger.made("x", std::span<const int32_t>(t).first(20)));
  EXPECT_FALSE(ledger.made("x", std::span<const int32_t>(t).first(11)));
  EXPECT_FALSE(ledger.made("y", std::span<const int32_t>(t).first(10)));
  EXPECT_FALSE(ledger.made("", std::span<const int32_t>(t).first(10)));
  const int64_t more[] = {30, 40};
  ledger.record("y", t, more);
  EXPECT_EQ(ledger.size(), 3u);  // the oldest key (x at 10) is forgotten
  EXPECT_FALSE(ledger.made("x", std::span<const int32_t>(t).first(10)));
  // Recording a key again makes it the most recent: x at 20 outlives y at 30.
  const int64_t again[] = {20};
  ledger.record("x", t, again);
  const int64_t last[] = {45};
  ledger.record("y", t, last);
  EXPECT_TRUE(ledger.made("x", std::span<const int32_t>(t).first(20)));
  EXPECT_FALSE(ledger.made("y", std::span<const int32_t>(t).first(30)));
  EXPECT_TRUE(ledger.made("y", std::span<const int32_t>(t).first(45)));
  EXPECT_TRUE(ledger.made("y", std::span<const int32_t>(t).first(40)));
  const OfferScope y = OfferScope::tenant(ledger, "y");
  EXPECT_TRUE(y.allows(t, 40));
  EXPECT_TRUE(y.allows(t, 45));
  EXPECT_FALSE(y.allows(t, 41));
  EXPECT_FALSE(y.allows(t, 0));
  EXPECT_TRUE(OfferScope::global().allows(t, 41));
  ledger.clear();
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_FALSE(y.allows(t, 40));
}

}  // namespace
}  // namespace anchorage::cache

// Planner: asks every tier where a prompt could resume and picks one (docs/architecture.md §5, the
// seed's order: the resident prefix's rows in place — its anchors and end anchor — when they
// start at least as late as anything else; then the pinned head or the parked session; the
// state store only when it starts strictly later than all of those; later the disk tiers).
// It also estimates how long the re-read takes, for usage and the peek route.
//
// Sources are registered in that order of preference: the chosen offer is the one that resumes
// latest, and among offers resuming at the same position the one registered first. An offer
// that is a read (ResumeOffer::restore_ms > 0: the disk tier) is chosen only when the re-read
// it saves over the best offer before it is estimated to take longer than the read. An offer
// that is not useful, or that would leave no prompt token to prefill, is never chosen. The
// planner restores nothing: the caller takes the chosen offer from its tier.
//
// Re-read estimate: a running median of the prefill rates of the last `window` measured
// prefills of at least min_prefill_tokens (note_prefill); before the first, the prior
// prior_tokens_per_s (500 tok/s: the `small` preset's f32 prefill on this project's 2-core
// machine under load, docs/performance.md, 456-1,363 tok/s at 1k).
//
// Thread safety: none; the engine thread owns it. plan() is const and counts nothing, so the
// peek route may call it (on the engine thread) without changing any figure.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string_view>
#include <vector>

#include "cache/offer_source.h"
#include "cache/resume_offer.h"
#include "cache/tenant_scope.h"

namespace anchorage::cache {

struct PlannerOptions {
  double prior_tokens_per_s = 500.0;
  int64_t min_prefill_tokens = 256;  // shorter prefills are dominated by fixed costs
  int window = 16;
};

struct Plan {
  ResumeOffer chosen;               // resume_at 0, tier "none", source "cold" when nothing helps
  int chosen_index = -1;            // into offers; -1: cold
  std::vector<ResumeOffer> offers;  // every source's answer, in registration order
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // chosen.resume_at
  int64_t reread_tokens = 0;  // prompt_tokens - cached_tokens
  double reread_eta_ms = 0.0;
};

class Planner {
 public:
  explicit Planner(const PlannerOptions& options = {});

  // Adds a source after those registered (it loses ties to them). It must outlive the planner.
  void add_source(const OfferSource* source);
  // Only offers `scope` allows are chosen: a source whose best offer is a state another
  // tenant made is asked again for the prompt cut at that position, until it offers one the
  // scope allows or nothing (tenant_scope.h).
  Plan plan(std::span<const int32_t> prompt, std::string_view session,
            const OfferScope& scope) const;

  // A prefill forwarded `tokens` in `ns` nanoseconds (ignored below min_prefill_tokens).
  void note_prefill(int64_t tokens, int64_t ns);
  // The median measured rate, or the prior before any measurement.
  double tokens_per_s() const;
  double eta_ms(int64_t reread_tokens) const;
  int64_t measured_prefills() const { return measured_; }

 private:
  PlannerOptions options_;
  std::vector<const OfferSource*> sources_;
  std::deque<double> rates_;  // tokens per second, oldest first
  int64_t measured_ = 0;
};

}  // namespace anchorage::cache

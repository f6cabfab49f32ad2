#include "cache/planner.h"

#include <algorithm>

#include "core/check.h"

namespace anchorage::cache {

Planner::Planner(const PlannerOptions& options) : options_(options) {
  ANCHORAGE_CHECK(options_.prior_tokens_per_s > 0 && options_.window >= 1);
}

void Planner::add_source(const OfferSource* source) {
  ANCHORAGE_CHECK(source != nullptr);
  sources_.push_back(source);
}

Plan Planner::plan(std::span<const int32_t> prompt, std::string_view session,
                   const OfferScope& scope) const {
  Plan p;
  p.prompt_tokens = int64_t(prompt.size());
  p.offers.reserve(sources_.size());
  for (size_t i = 0; i < sources_.size(); ++i) {
    ResumeOffer o = sources_[i]->offer(prompt, session);
    // Below a state the asking tenant did not make, the same tier may hold one it did: each
    // ask resumes strictly earlier (an offer leaves a token of its prompt), so this ends.
    while (o.useful() && o.resume_at < p.prompt_tokens && !scope.allows(prompt, o.resume_at))
      o = sources_[i]->offer(prompt.first(size_t(o.resume_at)), session);
    p.offers.push_back(o);
    // The engine needs the last token's logits, so an offer must leave a token to prefill.
    if (!o.useful() || o.resume_at >= p.prompt_tokens) continue;
    // Strictly later only: on a tie the source registered first keeps it.
    const int64_t base = p.chosen_index < 0 ? 0 : p.chosen.resume_at;
    if (p.chosen_index >= 0 && o.resume_at <= base) continue;
    // A read (the disk) only when the prefill it saves over the best so far costs more.
    if (o.restore_ms > 0 && eta_ms(o.resume_at - base) <= o.restore_ms) continue;
    p.chosen = o;
    p.chosen_index = int(i);
  }
  p.cached_tokens = p.chosen.resume_at;
  p.reread_tokens = p.prompt_tokens - p.cached_tokens;
  p.reread_eta_ms = eta_ms(p.reread_tokens) + p.chosen.restore_ms;
  return p;
}

void Planner::note_prefill(int64_t tokens, int64_t ns) {
  if (tokens < options_.min_prefill_tokens || ns <= 0) return;
  rates_.push_back(double(tokens) * 1e9 / double(ns));
  while (int64_t(rates_.size()) > options_.window) rates_.pop_front();
  ++measured_;
}

double Planner::tokens_per_s() const {
  if (rates_.empty()) return options_.prior_tokens_per_s;
  std::vector<double> v(rates_.begin(), rates_.end());
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + long(mid));
  return (lower + upper) / 2.0;
}

double Planner::eta_ms(int64_t reread_tokens) const {
  if (reread_tokens <= 0) return 0.0;
  return double(reread_tokens) * 1000.0 / tokens_per_s();
}

}  // namespace anchorage::cache

#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/argmax.h"

namespace anchorage::engine {

namespace {

// Larger logit first; on a tie the lower id first. A strict weak order, so sorting is
// deterministic whatever the algorithm does with equal keys.
bool before(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  if (a.first != b.first) return a.first > b.first;
  return a.second < b.second;
}

}  // namespace

core::Status SamplingParams::validate() const {
  if (!(temperature >= 0.0) || !std::isfinite(temperature))
    return core::Status::invalid_argument("temperature must be a finite number >= 0");
  if (top_k < 0) return core::Status::invalid_argument("top_k must be >= 0");
  if (!(top_p > 0.0 && top_p <= 1.0))
    return core::Status::invalid_argument("top_p must be in (0, 1]");
  if (!(min_p >= 0.0 && min_p <= 1.0))
    return core::Status::invalid_argument("min_p must be in [0, 1]");
  return core::Status::ok();
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

int32_t Sampler::argmax(std::span<const float> logits) {
  ANCHORAGE_CHECK(!logits.empty());
  // The first maximum wins; vectorized (the plain loop over a 151,936-entry vocabulary took
  // tens of us a token, and the pool's workers fell asleep meanwhile).
  return int32_t(kernels::argmax(logits.data(), int64_t(logits.size())));
}

int32_t Sampler::sample(std::span<const float> logits) {
  ANCHORAGE_CHECK(!logits.empty());
  if (params_.temperature <= 0.0) return argmax(logits);
  sorted_ = false;
  keep_top_k(logits);
  if (params_.top_p < 1.0) keep_top_p();
  if (params_.min_p > 0.0) keep_min_p();
  return draw();
}

void Sampler::keep_top_k(std::span<const float> logits) {
  cand_.clear();
  cand_.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) cand_.emplace_back(logits[i], int32_t(i));
  const int64_t k = params_.top_k;
  if (k > 0 && k < int64_t(cand_.size())) {
    std::partial_sort(cand_.begin(), cand_.begin() + k, cand_.end(), before);
    cand_.resize(size_t(k));
    sorted_ = true;
  }
}

void Sampler::keep_top_p() {
  if (!sorted_) std::sort(cand_.begin(), cand_.end(), before);
  sorted_ = true;
  const double max_logit = cand_.front().first;
  double total = 0.0;
  probs_.resize(cand_.size());
  for (size_t i = 0; i < cand_.size(); ++i) {
    probs_[i] = std::exp(double(cand_[i].first) - max_logit);
    total += probs_[i];
  }
  double mass = 0.0;
  size_t keep = cand_.size();
  for (size_t i = 0; i < cand_.size(); ++i) {
    mass += probs_[i] / total;
    if (mass >= params_.top_p) {
      keep = i + 1;
      break;
    }
  }
  cand_.resize(keep);
}

void Sampler::keep_min_p() {
  // p_i >= min_p * p_max  <=>  logit_i - logit_max >= log(min_p): no normalisation needed.
  float max_logit = cand_.front().first;
  for (const auto& c : cand_) max_logit = std::max(max_logit, c.first);
  const double floor = std::log(params_.min_p);
  std::erase_if(cand_, [&](const std::pair<float, int32_t>& c) {
    return double(c.first) - double(max_logit) < floor;
  });
  ANCHORAGE_CHECK(!cand_.empty());  // the maximum always passes (0 >= log(min_p))
}

int32_t Sampler::draw() {
  float max_logit = cand_.front().first;
  for (const auto& c : cand_) max_logit = std::max(max_logit, c.first);
  const double inv_t = 1.0 / params_.temperature;
  probs_.resize(cand_.size());
  double total = 0.0;
  for (size_t i = 0; i < cand_.size(); ++i) {
    probs_[i] = std::exp((double(cand_[i].first) - double(max_logit)) * inv_t);
    total += probs_[i];
  }
  const double u = rng_.uniform() * total;
  double acc = 0.0;
  for (size_t i = 0; i < cand_.size(); ++i) {
    acc += probs_[i];
    if (u < acc) return cand_[i].second;
  }
  return cand_.back().second;  // u rounded up to the total
}

}  // namespace anchorage::engine

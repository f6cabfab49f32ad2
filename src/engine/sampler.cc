#include "engine/sampler.h"

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "engine/vocab_exp.h"
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
  const int32_t best = argmax(logits);
  if (params_.temperature <= 0.0) return best;
  const float max_logit = logits[size_t(best)];
  if (!(max_logit == max_logit)) return best;  // a NaN first: no distribution to draw from
  const int64_t n = int64_t(logits.size()), k = params_.top_k;
  const bool top_k = (k > 0 && k < n), top_p = (params_.top_p < 1.0), min_p = (params_.min_p > 0.0);
  if (!top_k && !top_p && !min_p) return draw_all(logits, best);
  // The filters run on candidates only: the tokens at or above a logit threshold chosen so that
  // every token a filter could keep is among them (sorting the whole vocabulary took ~17 ms a
  // token: docs/engine.md "Sampling").
  top_p_total_ = 0.0;
  if (top_k) {
    gather_at_least(logits, threshold_for_count(logits, max_logit, k));
    // Fewer than k only when NaNs (never gathered) leave fewer.
    const ptrdiff_t kept = std::min<ptrdiff_t>(ptrdiff_t(k), ptrdiff_t(cand_.size()));
    std::partial_sort(cand_.begin(), cand_.begin() + kept, cand_.end(), before);
    cand_.resize(size_t(kept));
  } else if (top_p) {
    // Softmax weights of every token at temperature 1, for the mass top-p measures.
    top_p_total_ = vocab_weights(logits, max_logit, 1.0f);
    gather_at_least(logits, threshold_for_mass(logits, max_logit, params_.top_p * top_p_total_));
  } else {  // min-p alone: keep_min_p's bound, a float's rounding lower
    const float t = float(double(max_logit) + std::log(params_.min_p));
    gather_at_least(logits, std::nextafter(t, -std::numeric_limits<float>::infinity()));
  }
  if (top_p) keep_top_p();
  if (min_p) keep_min_p();
  return draw();
}

namespace {

// Whether any of x[0, 16) is >= t (tv: t in every lane; a NaN never is): four SSE2 compares.
bool any_at_least16(const float* x, __m128 tv) {
  auto ge = [&](int i) { return _mm_cmpge_ps(_mm_loadu_ps(x + i), tv); };
  return _mm_movemask_ps(_mm_or_ps(_mm_or_ps(ge(0), ge(4)), _mm_or_ps(ge(8), ge(12)))) != 0;
}

// The sum of w[i] over the i with x[i] >= t, in increasing i: one double chain, the same bits as
// the plain loop, but a group of 16 without a hit (most of them, unless the distribution is
// flat) is passed over after four compares (the plain loop's compare and branch per logit took
// two thirds of a peaked top-p draw).
double mass_at_least(std::span<const float> x, const float* w, float t) {
  const size_t n = x.size(), whole = n / 16 * 16;
  const __m128 tv = _mm_set1_ps(t);
  double m = 0.0;
  for (size_t i = 0; i < whole; i += 16) {
    if (!any_at_least16(&x[i], tv)) continue;
    for (size_t j = i; j < i + 16; ++j)
      if (x[j] >= t) m += double(w[j]);
  }
  for (size_t i = whole; i < n; ++i)
    if (x[i] >= t) m += double(w[i]);
  return m;
}

}  // namespace

void Sampler::gather_at_least(std::span<const float> logits, float t) {
  // Sixteen at a time; a group with a hit (rare: the candidates are few) one by one, so the
  // candidates come in increasing id.
  cand_.clear();
  const size_t n = logits.size(), whole = n / 16 * 16;
  const __m128 tv = _mm_set1_ps(t);
  for (size_t i = 0; i < whole; i += 16) {
    if (!any_at_least16(&logits[i], tv)) continue;
    for (size_t j = i; j < i + 16; ++j)
      if (logits[j] >= t) cand_.emplace_back(logits[j], int32_t(j));
  }
  for (size_t i = whole; i < n; ++i)
    if (logits[i] >= t) cand_.emplace_back(logits[i], int32_t(i));
}

float Sampler::threshold_for_count(std::span<const float> logits, float max_logit, int64_t k) {
  // max - d, d doubling, until k tokens are at or above it: the top k are then all among them.
  // Four d a pass (1, 2, 4, 8; then 16 .. 128; then 256 .. 1024 and 1024 again), the first that
  // holds k returned: the threshold one pass per d would find.
  for (float d0 = 1.0f; d0 <= 1024.0f; d0 *= 16.0f) {
    float t[4];
    for (int j = 0; j < 4; ++j) t[j] = max_logit - std::min(d0 * float(1 << j), 1024.0f);
    int64_t counts[4];
    vocab_counts_at_least(logits, t, counts);
    for (int j = 0; j < 4; ++j)
      if (counts[j] >= k) return t[j];
  }
  return -std::numeric_limits<float>::infinity();
}

float Sampler::threshold_for_mass(std::span<const float> logits, float max_logit, double mass) {
  // max - d, d doubling, until the tokens at or above it hold the mass top-p keeps (with room
  // for the sums' rounding): the prefix top-p keeps is then among them.
  for (float d = 2.0f; d <= 128.0f; d *= 2.0f) {
    const float t = max_logit - d;
    if (mass_at_least(logits, weights_.data(), t) >= mass * (1.0 + 1e-9)) return t;
  }
  return -std::numeric_limits<float>::infinity();
}

double Sampler::vocab_weights(std::span<const float> logits, float max_logit, float inv_t) {
  weights_.resize(logits.size());
  return vocab_exp_sum(logits, max_logit, inv_t, weights_.data(), &lanes_);
}

int32_t Sampler::draw_all(std::span<const float> logits, int32_t best) {
  // No filter: the whole vocabulary's weights at the temperature; the draw walks vocab_weights'
  // lanes, then the chosen lane's elements, adding the same weights in the same order. (One
  // double exp a token took ~0.85 ms a step.)
  const int64_t n = int64_t(logits.size());
  const double total =
      vocab_weights(logits, logits[size_t(best)], float(1.0 / params_.temperature));
  const double u = rng_.uniform() * total;
  double acc = 0.0;
  for (int64_t l = 0; l < 16 && l < n; ++l) {
    if (u < acc + lanes_[size_t(l)]) {
      double c = acc;
      int64_t last = l;
      for (int64_t i = l; i < n; i += 16) {
        c += double(weights_[size_t(i)]);
        last = i;
        if (u < c) return int32_t(i);
      }
      return int32_t(last);  // the walk's rounding fell short of the lane's sum
    }
    acc += lanes_[size_t(l)];
  }
  return best;  // u rounded up to the total: the heaviest token
}

void Sampler::keep_top_p() {
  if (top_p_total_ > 0.0) return keep_top_p_of_vocabulary();
  // After top-k: the k kept, sorted, and the softmax of those.
  probs_.resize(cand_.size());
  const double max_logit = cand_.front().first;
  double total = 0.0;
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

void Sampler::keep_top_p_of_vocabulary() {
  // The candidates (unsorted) with the whole vocabulary's weights and sum. The prefix's end is
  // narrowed by halving [lo, hi): nth_element puts the better half first, and its mass says
  // which half the end is in; below kSortBelow candidates the rest is sorted and scanned. So a
  // flat distribution, whose candidates are most of the vocabulary, costs a few linear passes,
  // not a sort of them. The kept tokens are the same prefix; only [lo, hi) ends up in order, and
  // nothing after needs more.
  constexpr size_t kSortBelow = 1024;
  const double total = top_p_total_;
  auto share = [&](size_t i) { return double(weights_[size_t(cand_[i].second)]) / total; };
  size_t lo = 0, hi = cand_.size();
  double acc = 0.0;  // the mass of [0, lo)
  while (hi - lo > kSortBelow) {
    const size_t mid = lo + (hi - lo) / 2;
    std::nth_element(cand_.begin() + ptrdiff_t(lo), cand_.begin() + ptrdiff_t(mid),
                     cand_.begin() + ptrdiff_t(hi), before);
    double m = acc;
    for (size_t i = lo; i < mid; ++i) m += share(i);
    if (m >= params_.top_p) {
      hi = mid;
    } else {
      acc = m;
      lo = mid;
    }
  }
  std::sort(cand_.begin() + ptrdiff_t(lo), cand_.begin() + ptrdiff_t(hi), before);
  size_t keep = hi;  // the sums' order fell short of p: [0, hi) held it by the halving's sums
  double mass = acc;
  for (size_t i = lo; i < hi; ++i) {
    mass += share(i);
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

#include "server/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"

namespace anchorage::server {

void fill_token_logprobs(std::span<const float> logits, int top_n, TokenEvent* event) {
  ANCHORAGE_CHECK(!logits.empty());
  ANCHORAGE_CHECK(event->token >= 0 && size_t(event->token) < logits.size());
  float max_logit = logits[0];
  for (const float x : logits) max_logit = std::max(max_logit, x);
  double sum = 0.0;
  for (const float x : logits) sum += std::exp(double(x) - double(max_logit));
  const double log_norm = double(max_logit) + std::log(sum);
  auto logprob = [&](int32_t id) { return float(double(logits[size_t(id)]) - log_norm); };
  event->logprob = logprob(event->token);

  // The top_n best by one pass with a small sorted list (top_n <= 20, V ~ 150k).
  event->top.clear();
  if (top_n <= 0) return;
  const size_t n = std::min(size_t(top_n), logits.size());
  std::vector<int32_t> best;
  best.reserve(n + 1);
  auto better = [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] ||
           (logits[size_t(a)] == logits[size_t(b)] && a < b);
  };
  for (size_t i = 0; i < logits.size(); ++i) {
    const int32_t id = int32_t(i);
    if (best.size() == n && !better(id, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), id, better), id);
    if (best.size() > n) best.pop_back();
  }
  for (const int32_t id : best) event->top.emplace_back(id, logprob(id));
}

}  // namespace anchorage::server

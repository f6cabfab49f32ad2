#include "server/token_logprobs.h"

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "engine/vocab_exp.h"
#include "kernels/argmax.h"

namespace anchorage::server {

void fill_token_logprobs(std::span<const float> logits, int top_n, TokenEvent* event) {
  ANCHORAGE_CHECK(!logits.empty());
  ANCHORAGE_CHECK(event->token >= 0 && size_t(event->token) < logits.size());
  // The argmax's value is the loop's max: NaNs never win, a NaN first stays, ±0 keep the first.
  const float max_logit = logits[size_t(kernels::argmax(logits.data(), int64_t(logits.size())))];
  const double sum = engine::vocab_exp_sum(logits, max_logit, 1.0f, nullptr, nullptr);
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
  auto offer = [&](size_t i) {
    const int32_t id = int32_t(i);
    if (best.size() == n && !better(id, best.back())) return;
    best.insert(std::upper_bound(best.begin(), best.end(), id, better), id);
    if (best.size() > n) best.pop_back();
  };
  // Once the list is full, an id (later than all in it) is better than the last only with a
  // strictly greater logit: four at a time are skipped when none is (SSE2; a NaN never is).
  const size_t count = logits.size(), whole = count / 4 * 4;
  size_t i = 0;
  for (; i < whole; i += 4) {
    if (best.size() == n &&
        _mm_movemask_ps(
            _mm_cmpgt_ps(_mm_loadu_ps(&logits[i]), _mm_set1_ps(logits[size_t(best.back())]))) == 0)
      continue;
    for (size_t j = i; j < i + 4; ++j) offer(j);
  }
  for (; i < count; ++i) offer(i);
  for (const int32_t id : best) event->top.emplace_back(id, logprob(id));
}

}  // namespace anchorage::server

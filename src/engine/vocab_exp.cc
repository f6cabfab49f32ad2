#include "engine/vocab_exp.h"

#include <algorithm>
#include <cstddef>

#include "kernels/activation.h"

namespace anchorage::engine {

double vocab_exp_sum(std::span<const float> logits, float max_logit, float inv_t, float* weights,
                     VocabLanes* lanes) {
  // Chunks of a multiple of 16, so every lane sees its elements in the same order whether the
  // weights are kept (the sampler's draw walks them) or not.
  constexpr size_t kChunk = 4096;
  alignas(64) float scratch[kChunk];
  VocabLanes sums{};
  const size_t n = logits.size();
  for (size_t c0 = 0; c0 < n; c0 += kChunk) {
    const size_t m = std::min(kChunk, n - c0);
    float* w = weights != nullptr ? weights + c0 : scratch;
    for (size_t i = 0; i < m; ++i) w[i] = (logits[c0 + i] - max_logit) * inv_t;
    kernels::exp_row(w, int64_t(m), w);
    const size_t whole = m / 16 * 16;
    for (size_t i = 0; i < whole; i += 16)
      for (size_t l = 0; l < 16; ++l) sums[l] += double(w[i + l]);
    for (size_t i = whole; i < m; ++i) sums[i - whole] += double(w[i]);
  }
  double total = 0.0;
  for (const double s : sums) total += s;
  if (lanes != nullptr) *lanes = sums;
  return total;
}

}  // namespace anchorage::engine

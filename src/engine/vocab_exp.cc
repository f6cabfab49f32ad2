#include "engine/vocab_exp.h"

#include <algorithm>
#include <cstddef>

#include "core/isa.h"
#include "engine/vocab_exp_impl.h"
#include "kernels/activation.h"

namespace anchorage::engine {

namespace vocab_detail {
void scale_avx2(const float* x, size_t m, float max_logit, float inv_t, float* w);
void add_lanes_avx2(const float* w, size_t m, double* sums);
void counts_at_least_avx2(const float* x, size_t n, const float* t, int64_t* counts);
}  // namespace vocab_detail

void vocab_counts_at_least(std::span<const float> x, const float (&t)[4], int64_t (&counts)[4]) {
  if (core::active_isa() != core::Isa::kScalar)
    return vocab_detail::counts_at_least_avx2(x.data(), x.size(), t, counts);
  vocab_detail::counts_at_least_any(x.data(), x.size(), t, counts);
}

double vocab_exp_sum(std::span<const float> logits, float max_logit, float inv_t, float* weights,
                     VocabLanes* lanes) {
  // Chunks of a multiple of 16, so every lane sees its elements in the same order whether the
  // weights are kept (the sampler's draw walks them) or not.
  constexpr size_t kChunk = 4096;
  alignas(64) float scratch[kChunk];
  VocabLanes sums{};
  const size_t n = logits.size();
  const bool avx2 = core::active_isa() != core::Isa::kScalar;
  for (size_t c0 = 0; c0 < n; c0 += kChunk) {
    const size_t m = std::min(kChunk, n - c0);
    float* w = weights != nullptr ? weights + c0 : scratch;
    if (avx2) {
      vocab_detail::scale_avx2(logits.data() + c0, m, max_logit, inv_t, w);
    } else {
      vocab_detail::scale_any(logits.data() + c0, m, max_logit, inv_t, w);
    }
    kernels::exp_row(w, int64_t(m), w);
    if (avx2) {
      vocab_detail::add_lanes_avx2(w, m, sums.data());
    } else {
      vocab_detail::add_lanes_any(w, m, sums.data());
    }
  }
  double total = 0.0;
  for (const double s : sums) total += s;
  if (lanes != nullptr) *lanes = sums;
  return total;
}

}  // namespace anchorage::engine

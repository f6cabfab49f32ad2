// Passes over a whole vocabulary's logits. The softmax weights and their sum, in one fixed order:
// what the sampler draws from (engine/sampler.h) and what reported logprobs are normalized by
// (server/token_logprobs.h); and the counts of logits at or above thresholds, which the sampler's
// top-k threshold search makes.
//
//   w_i = exp((x_i - max_logit) * inv_t), by the vector exp (kernels::exp_row: the same bits in
//   every ISA); lane l of 16 adds double(w_l), double(w_l+16), ... in order; the total adds the
//   lanes in order.
//
// A double std::exp per logit took 0.67 ms a token over 151,936 logits
// (`build/bench/sampler_bench --benchmark_filter=token_logprobs`, docs/performance.md "The
// sampler").
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace anchorage::engine {

using VocabLanes = std::array<double, 16>;

// Returns the total. weights: nullptr, or room for logits.size() floats, which receives the w_i;
// lanes: nullptr, or receives the 16 lane sums.
double vocab_exp_sum(std::span<const float> logits, float max_logit, float inv_t, float* weights,
                     VocabLanes* lanes);

// counts[j] = how many of x are >= t[j] (a NaN never is); x.size() < 2^31. One pass for four
// thresholds: the sampler's top-k threshold search tries them four at a time (built for AVX2
// as well: a pass per threshold in SSE2 took most of a top-k draw).
void vocab_counts_at_least(std::span<const float> x, const float (&t)[4], int64_t (&counts)[4]);

}  // namespace anchorage::engine

// Log-probabilities of a sampled token and its top alternatives, from the raw logits of the
// position that produced it: the model's own distribution (log-softmax at temperature 1, no
// sampling filter), as OpenAI reports them. The caches' exactness is checked from outside
// through these numbers, so they are computed in one fixed order: the maximum, then
// sum = sum(exp(x - max)) as engine::vocab_exp_sum adds it (the vector exp, the same bits in
// every ISA, summed in double in a fixed order), then logprob_i = float(x_i - (max + log(sum)))
// in double. The same logits give the same bits on every run, thread count and ISA.
//
// Thread safety: pure function (runs on the engine thread).
#pragma once

#include <cstdint>
#include <span>

#include "server/generation_job.h"

namespace anchorage::server {

// Fills event->logprob for event->token and event->top with the top_n most likely ids
// (largest logit first, ties to the lower id). top_n may be 0. logits is non-empty and
// event->token inside it.
void fill_token_logprobs(std::span<const float> logits, int top_n, TokenEvent* event);

}  // namespace anchorage::server

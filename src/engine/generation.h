// generate(): the generation loop — prefill a prompt (appended at the engine's length), then
// sample and decode until max_tokens, a stop token, the capacity, or the caller says stop.
//
// The last sampled token (a stop token, or the max_tokens-th) is returned but not decoded:
// the state holds the prompt and every generated token but the last, and the next prefill
// starts with that token (as a chat template appends the turn's end anyway).
//
// Threading: runs on the engine thread; on_token is called there.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/engine_options.h"
#include "engine/sampler.h"
#include "model/op_profile.h"

namespace anchorage::engine {

struct GenerationOptions {
  int64_t max_tokens = 16;
  std::vector<int32_t> stop_ids{};  // a sampled stop id ends the generation (and is returned)
  SamplingParams sampling{};
  PrefillOptions prefill{};  // anchor and progress callbacks of the prompt's prefill
  // Called with each sampled token, in order; returning false stops after it.
  std::function<bool(int32_t token)> on_token{};
  // Constrained decoding (tool_choice, a reasoning budget): called before each sample with the
  // tokens sampled so far; a non-empty result (ascending ids) restricts the next token to those
  // ids — the sampler runs over their logits only, with the same parameters, and a single id
  // is taken as is. Empty: free sampling. The engine's logits are never modified, so
  // log-probabilities still report the model's own distribution.
  std::function<std::span<const int32_t>(std::span<const int32_t> sampled)> allowed_next{};
  // Optional per-op time breakdowns of the prompt's prefill and of the decode steps.
  model::OpProfile* prefill_profile = nullptr;
  model::OpProfile* decode_profile = nullptr;
};

enum class FinishReason { kMaxTokens, kStopToken, kCapacity, kStopped };

struct GenerationResult {
  std::vector<int32_t> tokens;  // sampled tokens, in order
  FinishReason finish = FinishReason::kMaxTokens;
  int64_t prompt_tokens = 0;
  int64_t prefill_ns = 0;  // the prompt's prefill
  int64_t decode_ns = 0;   // every decode step (sampling included)
  int64_t decode_steps = 0;
};

// Errors: the prompt's prefill errors (empty prompt, capacity, token ids) and invalid
// sampling parameters, all before anything runs.
core::Result<GenerationResult> generate(Engine& engine, std::span<const int32_t> prompt,
                                        const GenerationOptions& opts);

}  // namespace anchorage::engine

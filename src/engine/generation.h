// generate(): the generation loop — prefill a prompt (appended at the engine's length), then
// sample and decode until max_tokens, a stop token, the capacity, or the caller says stop.
//
// The last sampled token (a stop token, or the max_tokens-th) is returned but not decoded:
// the state holds the prompt and every generated token but the last, and the next prefill
// starts with that token (as a chat template appends the turn's end anyway).
//
// With a drafter (and an architecture exact at every token), a decode step may forward the
// token and up to draft_max drafted ones as a verify block: each position's token is still
// chosen from that position's logits, in order, with the same sampler and callbacks, and the
// block is committed up to the first choice that differs from its draft (or where the
// generation ends). Tokens, logits, sampler draws and the final state are bit for bit those of
// drafting off (docs/speculation.md).
//
// Threading: runs on the engine thread; on_token is called there.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "engine/drafter.h"
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
  // Called with each sampled token, in order; returning false stops after it. engine.logits()
  // are then the logits the token was chosen from (also inside a verify block).
  std::function<bool(int32_t token)> on_token{};
  // Constrained decoding (tool_choice, a reasoning budget): called before each sample with the
  // tokens sampled so far; a non-empty result (ascending ids) restricts the next token to those
  // ids — the sampler runs over their logits only, with the same parameters, and a single id
  // is taken as is. Empty: free sampling. The engine's logits are never modified, so
  // log-probabilities still report the model's own distribution.
  std::function<std::span<const int32_t>(std::span<const int32_t> sampled)> allowed_next{};
  // Speculative decoding (null: off). draft_context is what the engine already holds before
  // prompt (a cached prefix), so the drafter sees the whole sequence.
  Drafter* drafter = nullptr;
  int64_t draft_max = 16;  // drafted tokens per verify block at most (>= 1)
  std::span<const int32_t> draft_context{};
  // Optional per-op time breakdowns of the prompt's prefill and of the decode steps.
  model::OpProfile* prefill_profile = nullptr;
  model::OpProfile* decode_profile = nullptr;
};

enum class FinishReason { kMaxTokens, kStopToken, kCapacity, kStopped };

struct GenerationResult {
  std::vector<int32_t> tokens;  // sampled tokens, in order
  FinishReason finish = FinishReason::kMaxTokens;
  int64_t prompt_tokens = 0;
  int64_t prefill_ns = 0;       // the prompt's prefill
  int64_t decode_ns = 0;        // every decode step (sampling included)
  int64_t decode_steps = 0;     // generated tokens forwarded (plain decodes and committed blocks)
  int64_t verify_blocks = 0;    // forwards of a token with drafts
  int64_t drafted_tokens = 0;   // drafts forwarded in those blocks
  int64_t accepted_tokens = 0;  // drafts that equalled the chosen token
};

// Errors: the prompt's prefill errors (empty prompt, capacity, token ids), invalid sampling
// parameters and draft_max < 1 with a drafter, all before anything runs.
core::Result<GenerationResult> generate(Engine& engine, std::span<const int32_t> prompt,
                                        const GenerationOptions& opts);

}  // namespace anchorage::engine

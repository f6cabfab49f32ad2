// GenerationJob, TokenEvent, JobOutcome: what an HTTP thread hands the engine queue and what
// comes back (docs/architecture.md §7). A job is prompt token ids plus how to generate; the engine
// thread answers with one TokenEvent per sampled token, then one JobOutcome. No text crosses
// this line except through `stop_after`, the server's stop-string check.
//
// Thread safety: plain values. A job's stop_after runs on the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/generation.h"
#include "engine/sampler.h"
#include "server/compaction.h"
#include "server/output_constraint.h"
#include "server/served_prompt.h"
#include "server/session.h"

namespace anchorage::server {

struct GenerationJob {
  uint64_t request_id = 0;  // logs only
  std::vector<int32_t> prompt;
  int64_t max_tokens = 16;
  engine::SamplingParams sampling;
  bool seed_given = false;        // the client sent the seed (else the server drew one)
  std::vector<int32_t> stop_ids;  // ends the generation; the id is reported, not rendered
  // Log-probabilities: -1 none; k >= 0: the sampled token's and the k most likely ones'.
  int top_logprobs = -1;
  SessionKey session;  // the caches' conversation key; logged as a hash
  // Chat: the rendered prompt text, for the caches' end alignment on the engine thread only
  // (never logged or kept). Empty for completions.
  std::string prompt_text;
  // Where the last user message starts in `prompt` (the disk tier's head anchors go below
  // it); -1 when not known (a raw completion).
  int64_t head_end = -1;
  // A greedy request's canonical parameters (the response cache's key with the prompt);
  // empty: not cacheable.
  std::string response_key;
  // Called on the engine thread with every sampled token that is not a stop id; true ends
  // the generation after it (a stop string completed). Null: no stop strings.
  std::function<bool(int32_t token)> stop_after;
  // Constrained decoding (tool_choice, reasoning_budget); null: free sampling.
  std::shared_ptr<OutputConstraint> constraint;
  int64_t submitted_ns = 0;  // core::now_ns() when the HTTP thread submitted it
  // Push a progress event to the stream after every prefill call (a streamed
  // return_progress request).
  bool return_progress = false;
  // A compaction request under --compaction continuation (server/compaction.h): the caches may
  // serve it as the session's conversation plus this turn. Engine thread only; never logged.
  std::optional<CompactionTurn> compaction;
};

// How far a prompt's prefill has come, in llama-server's prompt_progress terms: total prompt
// tokens, those a cache served, and those in the state so far (cached ones included).
struct PromptProgress {
  int64_t total = 0;
  int64_t cache = 0;
  int64_t processed = 0;
  int64_t time_ms = 0;  // since the prefill began
};

struct TokenEvent {
  // A progress report instead of a token (only for a job with return_progress): token,
  // logprob and top are unset, and nothing but a streamed answer's progress chunk reads it.
  std::optional<PromptProgress> progress;
  int32_t token = 0;
  // With top_logprobs >= 0: the token's log-probability under the model's raw distribution
  // (log-softmax of the logits, f32), and the top alternatives, most likely first.
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;
  // A token the server forced and the client never sees (a reasoning budget's close phrase):
  // not rendered, not in logprobs, not counted in usage.completion_tokens.
  bool hidden = false;
};

enum class JobEnd {
  kLength,      // max_tokens, or the context is full
  kStopToken,   // a stop id was sampled
  kStopString,  // stop_after said so
  kCancelled,   // the client went away (or the job was dropped at shutdown before it ran)
  kFailed,      // status says why
};

// "length", "stop_token", "stop_string", "cancelled", "failed" (logs and metrics labels).
const char* job_end_name(JobEnd end);
// The inverse (the response cache stores the name); kFailed for an unknown name.
JobEnd job_end_from_name(std::string_view name);

struct JobOutcome {
  JobEnd end = JobEnd::kLength;
  core::Status status;  // not OK only for kFailed and for a job dropped at shutdown
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // every sampled token, a final stop id included, hidden ones not
  int64_t hidden_tokens = 0;      // tokens the server forced and hid (output_constraint.h)
  // Where the prompt was resumed from (the cache split of `usage.anchorage`): tokens taken
  // from a cache, tokens read again (cached + reread == prompt_tokens), and the rest of the
  // split (source, exact, served) as EngineCaches::start_from derived it.
  int64_t cached_tokens = 0;
  int64_t reread_tokens = 0;
  CacheSplit cache;
  // Times (ns): waiting in the queue, the prompt's prefill, the decode loop, and from submit
  // to the first token (0 when no token came). The caches' share (docs/http-api.md
  // "Timings"): choosing and restoring where the prompt resumes (before the prefill), the
  // states they take at the prefill's lines (inside prefill_ns), and what they keep after the
  // generation (before the response's last chunk).
  int64_t queue_ns = 0;
  int64_t prefill_ns = 0;
  int64_t decode_ns = 0;
  int64_t first_token_ns = 0;
  int64_t cache_begin_ns = 0;
  int64_t cache_anchor_ns = 0;
  int64_t cache_end_ns = 0;
  // Speculative decoding (docs/speculation.md): verify blocks, their drafts and the drafts
  // chosen, and the part of each drafted from the persistent suffix store.
  int64_t verify_blocks = 0;
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
  int64_t store_blocks = 0;
  int64_t store_drafted_tokens = 0;
  int64_t store_accepted_tokens = 0;
};

}  // namespace anchorage::server

// ServedPrompt: the prompt the engine reads for a request, and how it differs from the client's
// own tokens (docs/exactness.md "Resume policy").
//
// Under the exact policy (the default) it is always the client's rendering and tokenization, and
// a cache resumes only where its rows equal those tokens. Under the rows policy the server may
// serve the rows' own tokens where the client's text matches them (text end alignment) or put
// back spans the client never saw (replay); such a request is reported as `served: "rows"`,
// `exact: false`, with the count of tokens that differ.
//
// CacheSplit: the usage figures a request reports (`usage.anchorage.cache`), derived in one
// place (EngineCaches::start_from) from the ServedPrompt and the restored offer.
//
// Thread safety: plain values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cache/resume_source.h"

namespace anchorage::server {

enum class ResumePolicy : uint8_t {
  kExact,  // serve the client's tokens; every response equals a --no-cache server's
  kRows,   // serve the rows' tokens where the client's text matches them (the seed's way)
};

std::string_view resume_policy_name(ResumePolicy p);
std::optional<ResumePolicy> parse_resume_policy(std::string_view name);

// How the served tokens were made from the client's.
enum class Alignment : uint8_t {
  kNone,    // the client's own tokens
  kText,    // the rows' own tokens up to the end anchor where the client's text matched them
  kReplay,  // the client's tokens with the end anchor's hidden spans put back
  // A compaction served as the session's conversation up to its end anchor plus one turn
  // carrying the client's instructions (--compaction continuation, server/compaction.h).
  kContinuation,
};

std::string_view alignment_name(Alignment a);

struct ServedPrompt {
  std::vector<int32_t> tokens;  // what the engine reads (may hold hidden tokens)
  Alignment aligned = Alignment::kNone;
  int64_t client_tokens = 0;  // the client's own prompt's length
  // The first position where tokens differ from the client's (tokens.size() when they do not).
  int64_t same_as_client = 0;

  // The client's own prompt, unchanged.
  static ServedPrompt client(const std::vector<int32_t>& prompt);
  // `served`, made from `prompt` by `how`.
  static ServedPrompt made(std::vector<int32_t> served, const std::vector<int32_t>& prompt,
                           Alignment how);

  // Served tokens from the first one that differs from the client's copy (0: the client's own).
  int64_t differing() const;
};

struct CacheSplit {
  cache::ResumeSource source = cache::ResumeSource::kCold;
  // A continuation's source says what was served; this, which tier restored the conversation
  // (its end anchor in place, the park, the spill).
  cache::ResumeSource restored_by = cache::ResumeSource::kCold;
  std::string_view tier() const {
    return cache::tier_name(source == cache::ResumeSource::kContinuation ? restored_by : source);
  }
  int64_t prompt_tokens = 0;  // the served prompt: cached + reread, always
  int64_t cached = 0;         // restored from a cache
  int64_t reread = 0;         // forwarded by the prefill
  // The resumed state is a cold prefill's of the client's own tokens, bit for bit.
  bool exact = true;
  Alignment aligned = Alignment::kNone;
  int64_t client_tokens = 0;  // the client's prompt (usage.prompt_tokens is the served one)
  int64_t differing = 0;      // see ServedPrompt::differing
  // The request came before the echo anchor planned after the previous answer was taken.
  bool echo_dropped = false;
  // "client" when the engine read the client's tokens, "rows" when it served others,
  // "continuation" for a compaction served as the conversation's continuation.
  std::string_view served_name() const {
    if (aligned == Alignment::kContinuation) return "continuation";
    return differing > 0 ? "rows" : "client";
  }
  // usage.prompt_tokens: the served prompt, except a continuation's, which reports the
  // client's own prompt (a client sizes its context by it: reporting the whole conversation
  // would make opencode compact again).
  int64_t usage_prompt_tokens() const {
    return aligned == Alignment::kContinuation ? client_tokens : prompt_tokens;
  }
  // usage.prompt_tokens_details.cached_tokens: of the reported prompt, what the engine did not
  // read (a continuation read only its new turn).
  int64_t usage_cached_tokens() const {
    return aligned == Alignment::kContinuation ? std::max<int64_t>(0, client_tokens - reread)
                                               : cached;
  }
  // usage.anchorage.cache.served_prompt_tokens: the tokens the engine was given, reported when
  // they are not the client's prompt's count (a continuation).
  bool reports_served_count() const { return usage_prompt_tokens() != prompt_tokens; }
};

}  // namespace anchorage::server

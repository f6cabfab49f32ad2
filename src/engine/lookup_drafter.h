// LookupDrafter: drafts by prompt lookup — the longest earlier occurrence of the sequence's
// last tokens, and the tokens that followed it (docs/speculation.md). Agent traffic quotes
// what it read (a file, then its edit; tool-call JSON), so what followed last time is a good
// guess. A match whose continuation reaches the context's end continues with its own period (a
// loop drafts the loop). With no match of at least min_match tokens in the context, it asks the
// fallback source (the persistent suffix store, when the server has one) for the continuation
// of the context's last max_match tokens; none there either: no draft (a plain decode step).
//
// The proposal length adapts to the recent acceptance: it doubles (up to draft_max) after a
// block whose drafts were all chosen, and drops to one more than the accepted count otherwise.
//
// Threading: one per generation, on the engine thread (engine::Drafter).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/draft_source.h"
#include "engine/drafter.h"

namespace anchorage::engine {

struct LookupDrafterOptions {
  int64_t draft_max = 16;  // tokens per proposal at most (>= 1)
  int64_t min_match = 3;   // shortest suffix match that drafts (>= 1)
  int64_t max_match = 32;  // a longer match is not looked for (ranks equal to this long)
};

// What the fallback source contributed (the server's counters): its proposals, the tokens
// they offered and how many of those the generation chose.
struct FallbackDraftStats {
  int64_t blocks = 0;
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
};

class LookupDrafter : public Drafter {
 public:
  // fallback (may be null) must outlive the drafter.
  explicit LookupDrafter(const LookupDrafterOptions& opts, const DraftSource* fallback = nullptr);

  void propose(std::span<const int32_t> context, int64_t max_tokens,
               std::vector<int32_t>* out) override;
  void observe(int64_t proposed, int64_t accepted) override;

  // The end (exclusive) of the longest earlier occurrence of context's last tokens, at least
  // min_match long and with a token after it; the latest among equals. -1: none.
  static int64_t longest_match_end(std::span<const int32_t> context, int64_t min_match,
                                   int64_t max_match);

  const FallbackDraftStats& fallback_stats() const { return fallback_stats_; }

 private:
  LookupDrafterOptions opts_;
  const DraftSource* fallback_;
  int64_t next_len_;                 // the adaptive proposal length
  bool last_from_fallback_ = false;  // the last non-empty proposal came from the fallback
  FallbackDraftStats fallback_stats_;
};

}  // namespace anchorage::engine

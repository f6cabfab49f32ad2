// DraftSource: a second place the lookup drafter looks for a continuation when the request's own
// context has none (docs/speculation.md) — the persistent suffix store (cache/suffix_store.h)
// implements it. The engine layer only knows this interface; the server hands one in.
//
// Threading: continuation() may be called from the engine thread while others add to the
// source; an implementation must allow that.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace anchorage::engine {

class DraftSource {
 public:
  virtual ~DraftSource() = default;
  // Up to max_tokens tokens that followed the longest earlier occurrence (at least min_match
  // tokens) of context's last tokens, written to *out (cleared first); empty: no match.
  virtual void continuation(std::span<const int32_t> context, int64_t max_tokens, int64_t min_match,
                            std::vector<int32_t>* out) const = 0;
};

}  // namespace anchorage::engine

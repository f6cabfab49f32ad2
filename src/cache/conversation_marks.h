// ConversationMarks: what a conversation's token positions carry besides their ids, for matching
// the client's copy of it (docs/end-alignment.md, docs/cache.md "Resident prefix"): the spans
// the client never saw (hidden) and the regions the engine generated, whose text the response
// showed its own way. They belong to the tokens, not to a saved state: they travel with the
// conversation (in place, parked, spilled) and are cut where its tokens are. A value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cache/hidden_span.h"

namespace anchorage::cache {

struct ConversationMarks {
  std::vector<HiddenSpan> hidden;                      // sorted, disjoint
  std::vector<std::pair<int64_t, int64_t>> generated;  // [begin, end), ascending

  // Only the marks wholly inside the first n positions stay (the tokens after n changed).
  void keep_below(int64_t n) {
    std::erase_if(hidden, [n](const HiddenSpan& h) { return h.end > n; });
    std::erase_if(generated, [n](const std::pair<int64_t, int64_t>& g) { return g.second > n; });
  }
  ConversationMarks below(int64_t n) const {
    ConversationMarks out = *this;
    out.keep_below(n);
    return out;
  }
  void clear() {
    hidden.clear();
    generated.clear();
  }
};

}  // namespace anchorage::cache

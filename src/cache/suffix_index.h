// SuffixIndex: an immutable suffix array over the suffix store's token log, and the longest-match
// lookup the lookup drafter asks it (docs/suffix-store.md "Lookup"). The text is the log's
// documents, each followed by kDocumentEnd, which no token id equals: a match never spans two
// documents and a continuation stops at its document's end.
//
// Lookup rule, deterministic: the longest suffix of the context (at least min_match tokens) that
// occurs in the text followed by at least one token of the same document; among its occurrences
// the most recent (the largest position in the log); the up to max_tokens tokens after it.
//
// Threading: built by SuffixIndex::build on any thread (the store's builder thread); immutable
// afterwards, so any number of threads may look up in it at once without a lock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/range_max.h"
#include "cache/suffix_sort.h"
#include "core/status.h"

namespace anchorage::cache {

// Follows every document in the text; larger than any token id the store accepts.
inline constexpr uint32_t kDocumentEnd = kMaxSortableToken;

struct SuffixMatch {
  int32_t match_tokens = 0;  // the matched suffix's length; 0: no draft
  uint64_t position = 0;     // where the occurrence starts in the text (informative)
};

class SuffixIndex {
 public:
  // `text`: documents each ending with kDocumentEnd (or empty). Fails as sort_token_suffixes.
  static core::Result<std::shared_ptr<const SuffixIndex>> build(std::vector<uint32_t> text,
                                                                bool force_64bit = false);

  uint64_t text_tokens() const { return text_.size(); }

  // Appends the draft (at most max_tokens ids) to *out and says what matched; match_tokens 0
  // (and nothing appended) when no suffix of at least min_match tokens (>= 1) occurs with a
  // continuation. Tokens of the context that no document can hold (negative, kDocumentEnd and
  // above) end every match: only the context after the last of them is matched.
  SuffixMatch lookup(std::span<const int32_t> context, int max_tokens, int min_match,
                     std::vector<int32_t>* out) const;

  // The suffix array (tests compare it with a brute-force sort).
  std::span<const uint32_t> test_suffix_array() const { return sa_; }

 private:
  SuffixIndex(std::vector<uint32_t> text, std::vector<uint32_t> sa);
  // The first suffix-array index whose suffix is not less than `pattern`, in [lo, hi).
  size_t lower_bound(std::span<const uint32_t> pattern, size_t lo, size_t hi) const;
  // Occurrences of pattern followed by a token of the same document: the range [*lo, *hi).
  void continued_range(std::span<const uint32_t> pattern, size_t* lo, size_t* hi) const;

  std::vector<uint32_t> text_;
  std::vector<uint32_t> sa_;
  RangeMax recent_;  // over sa_: the most recent occurrence in a range
};

}  // namespace anchorage::cache

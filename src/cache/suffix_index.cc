#include "cache/suffix_index.h"

#include <algorithm>

namespace anchorage::cache {

core::Result<std::shared_ptr<const SuffixIndex>> SuffixIndex::build(std::vector<uint32_t> text,
                                                                    bool force_64bit) {
  auto sa = sort_token_suffixes(text, force_64bit);
  if (!sa) return sa.status();
  return std::shared_ptr<const SuffixIndex>(new SuffixIndex(std::move(text), std::move(*sa)));
}

SuffixIndex::SuffixIndex(std::vector<uint32_t> text, std::vector<uint32_t> sa)
    : text_(std::move(text)), sa_(std::move(sa)), recent_(sa_) {}

size_t SuffixIndex::lower_bound(std::span<const uint32_t> pattern, size_t lo, size_t hi) const {
  const uint32_t* text = text_.data();
  const size_t n = text_.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    size_t pos = sa_[mid];
    size_t avail = std::min(pattern.size(), n - pos);
    // The suffix is less than the pattern when it is smaller at the first difference, or when
    // it is a proper prefix of it (it ends first).
    auto [a, b] = std::mismatch(text + pos, text + pos + avail, pattern.begin());
    bool less = (a != text + pos + avail) ? (*a < *b) : (avail < pattern.size());
    if (less) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void SuffixIndex::continued_range(std::span<const uint32_t> pattern, size_t* lo, size_t* hi) const {
  // Suffixes that start with the pattern form one range; those where the document ends right
  // after it sort last in it (kDocumentEnd is the largest symbol), and no suffix equals the
  // pattern exactly (the text ends with kDocumentEnd). So the continued occurrences are
  // [lower_bound(pattern), lower_bound(pattern + kDocumentEnd)).
  *lo = lower_bound(pattern, 0, sa_.size());
  std::vector<uint32_t> ended(pattern.begin(), pattern.end());
  ended.push_back(kDocumentEnd);
  *hi = lower_bound(ended, *lo, sa_.size());
}

SuffixMatch SuffixIndex::lookup(std::span<const int32_t> context, int max_tokens, int min_match,
                                std::vector<int32_t>* out) const {
  SuffixMatch none;
  if (min_match < 1 || max_tokens < 1 || sa_.empty()) return none;
  size_t start = context.size();
  while (start > 0 && context[start - 1] >= 0 && uint32_t(context[start - 1]) < kDocumentEnd) {
    --start;
  }
  std::vector<uint32_t> tail(context.begin() + start, context.end());
  if (tail.size() < size_t(min_match)) return none;
  auto suffix = [&](size_t m) { return std::span<const uint32_t>(tail).last(m); };

  // A suffix of length m occurs with a continuation only if its suffix of length m - 1 does,
  // so the longest length is found by bisection over m.
  size_t lo = 0, hi = 0;
  continued_range(suffix(min_match), &lo, &hi);
  if (lo == hi) return none;
  size_t best_m = min_match, best_lo = lo, best_hi = hi;
  size_t m_lo = min_match + 1, m_hi = tail.size();  // candidates not tried yet
  while (m_lo <= m_hi) {
    size_t m = m_lo + (m_hi - m_lo) / 2;
    continued_range(suffix(m), &lo, &hi);
    if (lo < hi) {
      best_m = m, best_lo = lo, best_hi = hi;
      m_lo = m + 1;
    } else {
      m_hi = m - 1;
    }
  }
  uint32_t pos = recent_.max(best_lo, best_hi);
  size_t next = pos + best_m;
  for (int i = 0; i < max_tokens && next < text_.size() && text_[next] != kDocumentEnd; ++i) {
    out->push_back(int32_t(text_[next++]));
  }
  return SuffixMatch{int32_t(best_m), pos};
}

}  // namespace anchorage::cache

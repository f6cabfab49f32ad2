#include "engine/lookup_drafter.h"

#include <algorithm>

#include "core/check.h"

namespace anchorage::engine {

LookupDrafter::LookupDrafter(const LookupDrafterOptions& opts, const DraftSource* fallback)
    : opts_(opts), fallback_(fallback), next_len_(std::max<int64_t>(1, opts.draft_max / 2)) {
  ANCHORAGE_CHECK(opts.draft_max >= 1 && opts.min_match >= 1 && opts.max_match >= opts.min_match);
}

int64_t LookupDrafter::longest_match_end(std::span<const int32_t> context, int64_t min_match,
                                         int64_t max_match) {
  const int64_t n = int64_t(context.size());
  if (n < min_match + 1) return -1;
  const int32_t* c = context.data();
  int64_t best_end = -1;
  int64_t best_len = min_match - 1;
  // An occurrence ending at e (exclusive) < n, so that c[e] followed it; latest first.
  for (int64_t e = n - 1; e >= min_match; --e) {
    if (c[e - 1] != c[n - 1]) continue;
    int64_t len = 1;
    const int64_t cap = std::min(max_match, e);
    while (len < cap && c[e - 1 - len] == c[n - 1 - len]) ++len;
    if (len > best_len) {
      best_len = len;
      best_end = e;
      if (len == max_match) break;
    }
  }
  return best_end;
}

void LookupDrafter::propose(std::span<const int32_t> context, int64_t max_tokens,
                            std::vector<int32_t>* out) {
  out->clear();
  const int64_t k = std::min(max_tokens, next_len_);
  const int64_t end = longest_match_end(context, opts_.min_match, opts_.max_match);
  last_from_fallback_ = false;
  if (end < 0) {
    if (fallback_ == nullptr) return;
    const size_t tail = size_t(std::min<int64_t>(opts_.max_match, int64_t(context.size())));
    fallback_->continuation(context.last(tail), k, opts_.min_match, out);
    if (int64_t(out->size()) > k) out->resize(size_t(k));
    last_from_fallback_ = !out->empty();
    return;
  }
  // Past the context's end the continuation repeats itself with the match's period, so a
  // loop (the latest match ends just before the last token) drafts more than one token.
  const int64_t n = int64_t(context.size());
  for (int64_t i = 0; i < k; ++i)
    out->push_back(end + i < n ? context[size_t(end + i)] : (*out)[size_t(end + i - n)]);
}

void LookupDrafter::observe(int64_t proposed, int64_t accepted) {
  if (last_from_fallback_) {
    ++fallback_stats_.blocks;
    fallback_stats_.drafted_tokens += proposed;
    fallback_stats_.accepted_tokens += accepted;
  }
  next_len_ = accepted == proposed ? std::min(opts_.draft_max, 2 * std::max<int64_t>(1, proposed))
                                   : std::max<int64_t>(1, accepted + 1);
}

}  // namespace anchorage::engine

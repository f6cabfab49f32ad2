#include "cache/end_replay.h"

#include <algorithm>

namespace anchorage::cache {

std::optional<std::vector<int32_t>> replay_hidden(std::span<const int32_t> rows,
                                                  std::span<const HiddenSpan> hidden,
                                                  std::span<const int32_t> prompt,
                                                  std::span<const int32_t> glue) {
  auto is_glue = [&](int32_t id) { return std::binary_search(glue.begin(), glue.end(), id); };
  const int64_t n = int64_t(rows.size());
  const int64_t m = int64_t(prompt.size());
  int64_t i = 0;  // next row token
  int64_t j = 0;  // next copy token
  // Rows [i, stop) must be the copy's next tokens, one for one.
  auto match = [&](int64_t stop) {
    if (j + (stop - i) > m) return false;
    if (!std::equal(rows.begin() + i, rows.begin() + stop, prompt.begin() + j)) return false;
    j += stop - i;
    i = stop;
    return true;
  };
  for (size_t s = 0; s < hidden.size(); ++s) {
    const HiddenSpan& span = hidden[s];
    if (span.empty()) continue;
    if (span.begin < i || span.end > n) return std::nullopt;  // unsorted or outside the rows
    // The rows' whitespace right before the span is glue: match up to it.
    int64_t before = span.begin;
    while (before > i && is_glue(rows[size_t(before - 1)])) --before;
    if (!match(before)) return std::nullopt;
    // The copy's whitespace where the span sat (before and after it: one run in the copy).
    while (j < m && is_glue(prompt[size_t(j)])) ++j;
    // The rows' whitespace after the span, up to the next span or the end.
    const int64_t limit = s + 1 < hidden.size() ? std::max(span.end, hidden[s + 1].begin) : n;
    i = span.end;
    while (i < limit && is_glue(rows[size_t(i)])) ++i;
  }
  if (!match(n)) return std::nullopt;
  std::vector<int32_t> out(rows.begin(), rows.end());
  out.insert(out.end(), prompt.begin() + j, prompt.end());
  return out;
}

}  // namespace anchorage::cache

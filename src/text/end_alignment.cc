#include "text/end_alignment.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace anchorage::text {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolOpen = "<tool_call>";
constexpr std::string_view kToolClose = "</tool_call>";

// JSON's whitespace, which is also every byte the template adds or trims ('\n').
bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

size_t skip_ws(std::string_view s, size_t i) {
  while (i < s.size() && is_ws(s[i])) ++i;
  return i;
}

// A think block that may be taken out: V[begin, end), end past the whitespace after </think>.
struct Cut {
  size_t begin = 0;
  size_t end = 0;
};

// The rows' visible bytes (hidden tokens left out) and where they may differ from the prompt.
// byte_flex[j]: V[j] is whitespace that may be absent from P. gap_flex[j] (j in [0, n]): P may
// hold any whitespace at the gap before V[j]. Every flexible gap's neighbouring whitespace in V
// is flexible too, so skipping greedily on both sides never needs to back up.
struct RowText {
  std::string v;
  std::vector<size_t> token_begin;  // V offset of each row's first visible byte; E+1 entries
  std::vector<uint8_t> byte_flex;
  std::vector<uint8_t> gap_flex;
  std::vector<Cut> cuts;  // sorted, disjoint

  // Makes the maximal whitespace run around the gap `pos` flexible.
  void flex_run(size_t pos) {
    size_t a = pos;
    while (a > 0 && is_ws(v[a - 1])) --a;
    size_t c = pos;
    while (c < v.size() && is_ws(v[c])) ++c;
    for (size_t j = a; j < c; ++j) byte_flex[j] = 1;
    for (size_t j = a; j <= c; ++j) gap_flex[j] = 1;
  }

  // Whitespace outside JSON strings inside each <tool_call>...</tool_call> of V[from, to), and
  // the whitespace after each </tool_call>.
  void flex_tool_calls(size_t from, size_t to) {
    const std::string_view view(v);
    size_t j = from;
    while (j < to) {
      const size_t open = view.substr(j, to - j).find(kToolOpen);
      if (open == std::string_view::npos) return;
      j += open + kToolOpen.size();
      bool in_string = false;
      for (; j < to; ++j) {
        const char c = v[j];
        if (in_string) {
          if (c == '\\') {
            ++j;  // the escaped byte is the string's own
          } else if (c == '"') {
            in_string = false;
          }
          continue;
        }
        gap_flex[j] = 1;
        if (is_ws(c)) {
          byte_flex[j] = 1;
        } else if (c == '"') {
          in_string = true;
        } else if (view.substr(j, kToolClose.size()) == kToolClose) {
          j += kToolClose.size();
          flex_run(j);
          break;
        }
      }
      if (j == to && !in_string) gap_flex[to] = 1;  // the rows end inside a call
    }
  }

  // The think block at the start of V[from, to) (or opened just before it by the prompt): its
  // tags' whitespace made flexible and, when allowed, a cut. Returns where the content after a
  // closed block starts (from when there is none).
  size_t find_reasoning(size_t from, size_t to, bool cut_allowed) {
    const std::string_view view(v);
    std::optional<size_t> open;
    const size_t s = skip_ws(view.substr(0, to), from);
    if (view.substr(s, kThinkOpen.size()) == kThinkOpen && s + kThinkOpen.size() <= to) {
      open = s;
    } else {
      size_t t = from;
      while (t > 0 && is_ws(v[t - 1])) --t;
      if (t >= kThinkOpen.size() &&
          view.substr(t - kThinkOpen.size(), kThinkOpen.size()) == kThinkOpen) {
        open = t - kThinkOpen.size();
      }
    }
    if (!open) return from;
    const size_t body = *open + kThinkOpen.size();
    flex_run(*open);
    flex_run(body);
    const size_t search_from = std::max(body, from);
    if (search_from >= to) return from;
    const size_t rel = view.substr(search_from, to - search_from).find(kThinkClose);
    if (rel == std::string_view::npos || search_from + rel + kThinkClose.size() > to) return from;
    const size_t close = search_from + rel;
    const size_t after = close + kThinkClose.size();
    flex_run(close);
    flex_run(after);
    if (cut_allowed) cuts.push_back({*open, skip_ws(view.substr(0, to), after)});
    return after;
  }
};

struct Failure {
  std::string why;
};

// Consecutive rows of a generated region, collected raw, then appended to V as the response's
// text of them: every ill-formed maximal subpart replaced by U+FFFD. A row that starts inside
// a replaced subpart starts after its U+FFFD.
class GeneratedText {
 public:
  void add(size_t row, std::string_view bytes) {
    rows_.push_back(row);
    starts_.push_back(raw_.size());
    raw_.append(bytes);
  }

  void flush(RowText* rt) {
    size_t next = 0;  // the next row to place
    size_t i = 0;
    while (i < raw_.size()) {
      const size_t run = utf8_valid_run(raw_, i);
      for (; next < rows_.size() && starts_[next] < i + run; ++next)
        rt->token_begin[rows_[next]] = rt->v.size() + (starts_[next] - i);
      rt->v.append(raw_, i, run);
      i += run;
      if (i == raw_.size()) break;
      // A row that starts at the subpart starts at its U+FFFD; one inside it, after it.
      for (; next < rows_.size() && starts_[next] == i; ++next)
        rt->token_begin[rows_[next]] = rt->v.size();
      rt->v.append(kReplacement);
      i += utf8_scan(raw_, i).n_bytes;
      for (; next < rows_.size() && starts_[next] < i; ++next)
        rt->token_begin[rows_[next]] = rt->v.size();
    }
    for (; next < rows_.size(); ++next) rt->token_begin[rows_[next]] = rt->v.size();
    rows_.clear();
    starts_.clear();
    raw_.clear();
  }

 private:
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::vector<size_t> rows_;
  std::vector<size_t> starts_;  // each row's first byte in raw_
  std::string raw_;
};

std::optional<Failure> build_row_text(const Tokenizer& tok, const EndRecord& rec,
                                      const EndAlignOptions& options, RowText* out) {
  const int64_t e = static_cast<int64_t>(rec.tokens.size());
  std::vector<uint8_t> hidden(rec.tokens.size(), 0);
  for (size_t i = 0; i < rec.hidden.size(); ++i) {
    const HiddenSpan& h = rec.hidden[i];
    if (h.begin < 0 || h.begin > h.end || h.end > e) {
      return Failure{"hidden span " + std::to_string(i) + " is outside the rows"};
    }
    std::fill(hidden.begin() + h.begin, hidden.begin() + h.end, 1);
  }
  for (size_t i = 0; i < rec.generated.size(); ++i) {
    const GeneratedRegion& g = rec.generated[i];
    if (g.begin < 0 || g.begin > g.end || g.end > e) {
      return Failure{"generated region " + std::to_string(i) + " is outside the rows"};
    }
  }

  std::vector<uint8_t> generated(rec.tokens.size(), 0);
  for (const GeneratedRegion& g : rec.generated)
    std::fill(generated.begin() + g.begin, generated.begin() + g.end, 1);

  RowText& rt = *out;
  rt.token_begin.resize(rec.tokens.size() + 1);
  std::vector<size_t> junctions;
  // A generated region's visible bytes as the response showed them (rule 5): special tokens
  // and ids with no token skipped (server/choice_builder.h), and bytes that do not form a
  // character replaced by U+FFFD (Tokenizer::decode), so they are collected, then sanitized.
  GeneratedText answer;
  const int32_t vocab = tok.vocab_size();
  for (size_t i = 0; i < rec.tokens.size(); ++i) {
    const int32_t id = rec.tokens[i];
    const std::string_view bytes = (id >= 0 && id < vocab) ? tok.token_bytes(id) : "";
    if (!generated[i] || hidden[i]) answer.flush(&rt);
    rt.token_begin[i] = rt.v.size();
    if (generated[i] && !hidden[i]) {
      answer.add(i, tok.is_special(id) ? std::string_view() : bytes);
      continue;
    }
    if (bytes.empty()) return Failure{"row " + std::to_string(i) + " has no token"};
    if (hidden[i]) {
      if (junctions.empty() || junctions.back() != rt.v.size()) junctions.push_back(rt.v.size());
      continue;
    }
    rt.v.append(bytes);
  }
  answer.flush(&rt);
  rt.token_begin[rec.tokens.size()] = rt.v.size();
  rt.byte_flex.assign(rt.v.size(), 0);
  rt.gap_flex.assign(rt.v.size() + 1, 0);

  for (size_t pos : junctions) rt.flex_run(pos);

  std::vector<GeneratedRegion> regions = rec.generated;
  std::sort(regions.begin(), regions.end(),
            [](const GeneratedRegion& a, const GeneratedRegion& b) { return a.begin < b.begin; });
  for (const GeneratedRegion& g : regions) {
    if (g.begin == g.end) continue;
    const size_t from = rt.token_begin[g.begin];
    const size_t to = rt.token_begin[g.end];
    const size_t content = rt.find_reasoning(from, to, options.allow_dropped_reasoning);
    rt.flex_tool_calls(content, to);
  }
  // Overlapping regions could give overlapping cuts; keep the first of any overlap.
  std::vector<Cut> kept;
  std::sort(rt.cuts.begin(), rt.cuts.end(),
            [](const Cut& a, const Cut& b) { return a.begin < b.begin; });
  for (const Cut& c : rt.cuts) {
    if (kept.empty() || c.begin >= kept.back().end) kept.push_back(c);
  }
  rt.cuts = std::move(kept);
  // At the end of the rows, whitespace in P stands for the rows' own only when the rows end in
  // flexible whitespace or a hidden span; otherwise it is new text and stays in P[b:].
  const size_t n = rt.v.size();
  const bool hidden_tail = !junctions.empty() && junctions.back() == n;
  if (!hidden_tail && !(n > 0 && rt.byte_flex[n - 1])) rt.gap_flex[n] = 0;
  return std::nullopt;
}

int64_t rows_up_to(const RowText& rt, size_t v_offset) {
  // Rows whose visible bytes end at or before v_offset.
  const auto first_end = rt.token_begin.begin() + 1;
  return std::upper_bound(first_end, rt.token_begin.end(), v_offset) - first_end;
}

}  // namespace

EndAlignment align_end(const Tokenizer& tok, const EndRecord& rec, std::string_view prompt_text,
                       const EndAlignOptions& options) {
  EndAlignment result;
  RowText rt;
  if (std::optional<Failure> f = build_row_text(tok, rec, options, &rt)) {
    result.why = std::move(f->why);
    return result;
  }

  const std::string_view v(rt.v);
  const std::string_view p = prompt_text;
  const size_t n = v.size();
  const size_t m = p.size();
  size_t ti = 0;
  size_t pi = 0;
  size_t next_cut = 0;
  // A think block being compared as the rows hold it; on a mismatch inside it, it is taken out.
  bool trying = false;
  size_t try_pi = 0;
  size_t farthest = 0;
  int dropped = 0;
  // The last row boundary reached on the path taken (not inside a think block on trial, not in
  // a flexible whitespace gap, where P's share of the run would be ambiguous) and where P was
  // then: P[0, part_pi) stands for T[0, part_rows).
  size_t next_row = 0;
  int64_t part_rows = 0;
  size_t part_pi = 0;

  while (true) {
    if (trying && ti >= rt.cuts[next_cut].end) {
      trying = false;  // the reasoning was in P as the rows hold it
      ++next_cut;
    }
    if (!trying) {
      while (next_row < rt.token_begin.size() && rt.token_begin[next_row] < ti) ++next_row;
      while (next_row < rt.token_begin.size() && rt.token_begin[next_row] == ti) {
        if (!rt.gap_flex[ti]) {
          part_rows = static_cast<int64_t>(next_row);
          part_pi = pi;
        }
        ++next_row;
      }
    }
    if (!trying && next_cut < rt.cuts.size() && ti == rt.cuts[next_cut].begin) {
      trying = true;
      try_pi = pi;
    }
    if (ti < n && rt.byte_flex[ti]) {
      ++ti;
      continue;
    }
    if (pi < m && rt.gap_flex[ti] && is_ws(p[pi])) {
      ++pi;
      continue;
    }
    if (ti == n) break;
    if (pi < m && v[ti] == p[pi]) {
      ++ti;
      ++pi;
      continue;
    }
    farthest = std::max(farthest, ti);
    if (trying) {
      // P holds no reasoning here, or an empty think block.
      pi = skip_ws(p, try_pi);
      if (p.substr(pi, kThinkOpen.size()) == kThinkOpen) {
        const size_t q = skip_ws(p, pi + kThinkOpen.size());
        if (p.substr(q, kThinkClose.size()) == kThinkClose) pi = q + kThinkClose.size();
      }
      pi = skip_ws(p, pi);
      ti = rt.cuts[next_cut].end;
      trying = false;
      ++next_cut;
      ++dropped;
      continue;
    }
    const int64_t rows = rows_up_to(rt, farthest);
    result.rows_matched = rows;
    result.partial_rows = part_rows;
    result.partial_prompt_bytes = part_pi;
    result.why =
        (pi == m ? "the prompt ends inside the rows at row " : "the prompt parts from row ") +
        std::to_string(rows) + " of " + std::to_string(rec.tokens.size()) + " (prompt byte " +
        std::to_string(pi) + ")";
    return result;
  }
  result.aligned = true;
  result.prompt_bytes = pi;
  result.rows_matched = static_cast<int64_t>(rec.tokens.size());
  result.regions_reasoning_dropped = dropped;
  return result;
}

}  // namespace anchorage::text

// End alignment by text: does the client's next prompt, rendered to text, start with the text of
// the rows the engine holds after a generation? The rows T[0,E) are the prompt the engine read
// plus what it generated, with spans the server inserted that the client never saw. The client
// sends the conversation back as messages, and the template renders them again: a sampled
// answer is often not the tokenizer's canonical encoding of its own text, and the re-rendering
// differs from the rows in a few known places. So the comparison is by bytes, and when the
// prompt's bytes P[0,b) are the rows' bytes up to those places, the server serves
// T[0,E) + tokenize(P[b:]) and resumes at the end anchor E instead of reading the rows again.
//
// Allowed differences (docs/end-alignment.md); every other byte must be the rows' own:
// 1. Hidden spans: their bytes are absent from P, and the runs of whitespace next to them may
//    differ (the template trims reasoning and adds its own newline before </think>).
// 2. Template framing in a generated region: the whitespace runs next to the region's
//    <think> / </think> tags and after a </tool_call> (the output parser drops them and the
//    template writes its own).
// 3. Tool-call JSON: inside <tool_call>...</tool_call> of a generated region, whitespace outside
//    JSON strings may differ (clients re-serialise arguments compactly; the template prints
//    them verbatim). Bytes inside strings are compared exactly.
// 4. Dropped reasoning: a generated region's think block (<think> ... </think> and the
//    whitespace after it) may be missing from P, or be an empty block <think>ws</think>, where
//    a client did not send the reasoning back or the template left it out (an earlier user
//    turn). Each region is first compared as the rows are; only when that fails inside its
//    think block is the block taken out. This generalises a second pass with every region's
//    reasoning taken out, and costs at most one more scan of each think block.
// 5. Special tokens sampled in a generated region (<|im_start|>, <|image_pad|>, ...): absent
//    from P, since the response skips them (added tokens that are not special, <think> and
//    <tool_call>, are shown and compared).
// Anything else that differs: not aligned, with a reason that holds numbers only, never text.
//
// Cost: O(bytes of T + bytes of P); no allocation beyond the byte view of T and its flags.
//
// Thread safety: a pure function; the Tokenizer's const methods may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace anchorage::text {

// Token positions [begin, end) the engine generated (not read from a prompt).
struct GeneratedRegion {
  int64_t begin = 0;
  int64_t end = 0;
};

// Token positions [begin, end) the server inserted and the client never saw (e.g. a reasoning
// budget's close phrase).
struct HiddenSpan {
  int64_t begin = 0;
  int64_t end = 0;
};

// What the engine holds at its end anchor. Spans and regions must lie in [0, tokens.size()),
// in any order; overlapping hidden spans are merged.
struct EndRecord {
  std::span<const int32_t> tokens;  // T[0,E)
  std::vector<HiddenSpan> hidden;
  std::vector<GeneratedRegion> generated;
};

struct EndAlignOptions {
  // Rule 4 above. Off: a region's reasoning must be in P as the rows hold it.
  bool allow_dropped_reasoning = true;
};

struct EndAlignment {
  bool aligned = false;
  size_t prompt_bytes = 0;  // when aligned: P[0, prompt_bytes) stands for T[0,E)
  std::string why;          // when not aligned: a short reason, numbers only
  // The leading rows whose visible bytes all matched P (E when aligned): where the copy parts.
  int64_t rows_matched = 0;
  // Regions whose think block was taken out (rule 4) to align.
  int regions_reasoning_dropped = 0;
  // When not aligned: the longest matched prefix that ends on a row boundary, by the same
  // rules: P[0, partial_prompt_bytes) stands for T[0, partial_rows) (0, 0: none). A rows-policy
  // server serves T[0, partial_rows) + tokenize(P[partial_prompt_bytes:]) (partial alignment).
  int64_t partial_rows = 0;
  size_t partial_prompt_bytes = 0;
};

EndAlignment align_end(const Tokenizer& tok, const EndRecord& rec, std::string_view prompt_text,
                       const EndAlignOptions& options = {});

}  // namespace anchorage::text

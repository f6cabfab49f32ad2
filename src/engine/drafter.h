// Drafter: proposes the tokens a generation is likely to choose next, for a verify block
// (engine/generation.h, docs/speculation.md). A draft never changes an answer: every position
// is chosen from its own logits as one-token decode would choose it, and a draft only saves
// forwards while it agrees with those choices.
//
// Threading: one Drafter per generation, called on the engine thread only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace anchorage::engine {

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to max_tokens tokens (max_tokens >= 1) that may follow context — every token of the
  // sequence so far, the last chosen one included — written to *out (cleared first). Leaving
  // it empty means no draft: the step is a plain decode.
  virtual void propose(std::span<const int32_t> context, int64_t max_tokens,
                       std::vector<int32_t>* out) = 0;
  // After each verify block: how many tokens the last proposal offered and how many of them
  // the generation chose (an adaptive drafter sizes its next proposal by this).
  virtual void observe(int64_t proposed, int64_t accepted) {
    (void)proposed;
    (void)accepted;
  }
};

}  // namespace anchorage::engine

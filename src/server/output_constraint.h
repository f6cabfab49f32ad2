// OutputConstraint: the constrained decoding a chat request asks for, run on the engine thread
// through engine::GenerationOptions::allowed_next (docs/http-api.md "tool_choice" and
// "reasoning_budget"):
//
// - tool_choice "required": the answer (after the reasoning, if any) must start with a tool
//   call — at its start only whitespace tokens (at most two) and <tool_call> are allowed;
// - tool_choice naming a function: as "required", then the call's head
//   `\n{"name": "NAME", "arguments": ` is forced token by token (the Qwen3 template's framing);
// - reasoning_budget N: after N reasoning tokens without </think>, a close phrase is forced,
//   then </think>. The phrase's tokens are *hidden*: the client never sees them, usage does not
//   count them, and the caches record them as a hidden span (the rows hold them).
//
// It follows the generated tokens with a small state machine: start (the model may open
// <think>), thinking, answer start, forced tokens, free. The prompt's tail decides where it
// starts (a prompt that ends inside <think> starts thinking; one whose generation prompt
// already closed it, enable_thinking false, starts at the answer).
//
// Thread safety: ConstraintVocab is immutable and shared; an OutputConstraint belongs to one
// job and is used by the engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

// The token ids the constraints need, found once per tokenizer.
struct ConstraintVocab {
  int32_t im_start = -1;
  int32_t think_open = -1;
  int32_t think_close = -1;
  int32_t tool_call_open = -1;
  std::vector<int32_t> whitespace;    // ids whose bytes are only spaces, tabs and newlines
  std::vector<int32_t> close_phrase;  // the reasoning budget's hidden phrase
  bool usable() const { return think_open >= 0 && think_close >= 0 && tool_call_open >= 0; }
};
ConstraintVocab make_constraint_vocab(const text::Tokenizer& tokenizer);

// What the budget's close phrase says (its tokens precede </think>; hidden from the client).
inline constexpr const char* kReasoningClosePhrase =
    "\n\nConsidering the limited time by the user, I have to give the solution based on the "
    "thinking directly now.\n";

enum class ToolChoiceMode { kAuto, kNone, kRequired, kNamed };

struct ConstraintSpec {
  ToolChoiceMode tool_choice = ToolChoiceMode::kAuto;
  std::string function_name;      // kNamed
  int64_t reasoning_budget = -1;  // -1: none
};

class OutputConstraint {
 public:
  // Null when the spec constrains nothing (or the vocabulary lacks the tags).
  static std::unique_ptr<OutputConstraint> create(const ConstraintVocab& vocab,
                                                  const text::Tokenizer& tokenizer,
                                                  const ConstraintSpec& spec,
                                                  std::span<const int32_t> prompt);

  // GenerationOptions::allowed_next: the ids the next token may be (empty: any).
  std::span<const int32_t> allowed_next(std::span<const int32_t> sampled);
  // True when sampled token i (0-based) is a hidden token of the close phrase.
  bool hidden(size_t i) const;
  int64_t hidden_count() const { return int64_t(hidden_.size()); }

 private:
  enum class State { kStart, kThinking, kAnswerStart, kForced, kFree };
  OutputConstraint(const ConstraintVocab& vocab, const ConstraintSpec& spec);
  void advance(int32_t token);
  // Force `tokens` one by one (hidden from the answer or not), then go to `after`.
  void force(std::vector<int32_t> tokens, bool hidden, State after);
  std::span<const int32_t> current();

  const ConstraintVocab& vocab_;
  ConstraintSpec spec_;
  State state_ = State::kStart;
  int64_t reasoning_tokens_ = 0;
  // Whitespace tokens at the answer's start; past kMaxLeadingWhitespace a tool constraint
  // allows only <tool_call>.
  static constexpr int kMaxLeadingWhitespace = 2;
  int leading_whitespace_ = 0;
  size_t consumed_ = 0;  // sampled tokens already followed
  // kForced: tokens still to force, then the state to go to.
  std::vector<int32_t> forced_;
  size_t forced_next_ = 0;
  bool forced_hidden_ = false;
  State after_forced_ = State::kFree;
  std::vector<int32_t> name_head_;       // kNamed: the call's head after <tool_call>
  std::vector<int32_t> start_allowed_;   // kStart under a tool constraint
  std::vector<int32_t> answer_allowed_;  // kAnswerStart under a tool constraint
  std::vector<size_t> hidden_;           // sampled indices that are hidden
  int32_t one_ = 0;
};

}  // namespace anchorage::server

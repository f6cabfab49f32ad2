#include "server/output_constraint.h"

#include <algorithm>

#include "text/tokenizer.h"

namespace anchorage::server {
namespace {

int32_t id_of(const text::Tokenizer& tok, std::string_view piece) {
  const auto id = tok.token_id(piece);
  return id ? *id : -1;
}

bool contains(const std::vector<int32_t>& sorted, int32_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

std::vector<int32_t> with(std::vector<int32_t> ids, std::initializer_list<int32_t> more) {
  for (int32_t id : more) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

ConstraintVocab make_constraint_vocab(const text::Tokenizer& tok) {
  ConstraintVocab v;
  v.im_start = id_of(tok, "<|im_start|>");
  v.think_open = id_of(tok, "<think>");
  v.think_close = id_of(tok, "</think>");
  v.tool_call_open = id_of(tok, "<tool_call>");
  v.whitespace = tok.whitespace_ids();
  v.close_phrase = tok.encode(kReasoningClosePhrase);
  return v;
}

std::unique_ptr<OutputConstraint> OutputConstraint::create(const ConstraintVocab& vocab,
                                                           const text::Tokenizer& tokenizer,
                                                           const ConstraintSpec& spec,
                                                           std::span<const int32_t> prompt) {
  const bool tools =
      spec.tool_choice == ToolChoiceMode::kRequired || spec.tool_choice == ToolChoiceMode::kNamed;
  if (!vocab.usable() || (!tools && spec.reasoning_budget < 0)) return nullptr;
  std::unique_ptr<OutputConstraint> c(new OutputConstraint(vocab, spec));
  // Where the generation starts: the last <think> / </think> after the last <|im_start|>.
  for (size_t i = prompt.size(); i-- > 0;) {
    if (prompt[i] == vocab.think_close) {
      c->state_ = State::kAnswerStart;
      break;
    }
    if (prompt[i] == vocab.think_open) {
      c->state_ = State::kThinking;
      break;
    }
    if (prompt[i] == vocab.im_start) break;
  }
  if (spec.tool_choice == ToolChoiceMode::kNamed) {
    c->name_head_ =
        tokenizer.encode("\n{\"name\": \"" + spec.function_name + "\", \"arguments\": ");
  }
  if (tools) {
    c->start_allowed_ = with(vocab.whitespace, {vocab.think_open, vocab.tool_call_open});
    c->answer_allowed_ = with(vocab.whitespace, {vocab.tool_call_open});
  }
  return c;
}

OutputConstraint::OutputConstraint(const ConstraintVocab& vocab, const ConstraintSpec& spec)
    : vocab_(vocab), spec_(spec) {}

std::span<const int32_t> OutputConstraint::allowed_next(std::span<const int32_t> sampled) {
  while (consumed_ < sampled.size()) advance(sampled[consumed_++]);
  return current();
}

bool OutputConstraint::hidden(size_t i) const {
  return std::binary_search(hidden_.begin(), hidden_.end(), i);
}

std::span<const int32_t> OutputConstraint::current() {
  switch (state_) {
    case State::kStart:
    case State::kAnswerStart:
      // A model that would rather not call keeps writing whitespace: after a few such tokens
      // only the call may come.
      if (!answer_allowed_.empty() && leading_whitespace_ >= kMaxLeadingWhitespace) {
        one_ = vocab_.tool_call_open;
        return std::span<const int32_t>(&one_, 1);
      }
      return state_ == State::kStart ? start_allowed_ : answer_allowed_;
    case State::kThinking:
      if (spec_.reasoning_budget >= 0 && reasoning_tokens_ >= spec_.reasoning_budget) {
        // Over budget: the close phrase (hidden), then </think>.
        std::vector<int32_t> phrase = vocab_.close_phrase;
        phrase.push_back(vocab_.think_close);
        force(std::move(phrase), /*hidden=*/true, State::kAnswerStart);
        return current();
      }
      return {};
    case State::kForced:
      one_ = forced_[forced_next_];
      return std::span<const int32_t>(&one_, 1);
    case State::kFree:
      return {};
  }
  return {};
}

void OutputConstraint::force(std::vector<int32_t> tokens, bool hidden, State after) {
  forced_ = std::move(tokens);
  forced_next_ = 0;
  forced_hidden_ = hidden;
  after_forced_ = after;
  state_ = State::kForced;
}

void OutputConstraint::advance(int32_t token) {
  const size_t index = consumed_ - 1;
  const bool tools = !answer_allowed_.empty();
  switch (state_) {
    case State::kStart:
      if (token == vocab_.think_open) {
        state_ = State::kThinking;
        return;
      }
      if (contains(vocab_.whitespace, token)) {
        ++leading_whitespace_;
        return;
      }
      state_ = State::kAnswerStart;
      advance(token);  // the answer starts with this token
      return;
    case State::kThinking:
      if (token == vocab_.think_close) {
        state_ = State::kAnswerStart;
        leading_whitespace_ = 0;
      } else {
        ++reasoning_tokens_;
      }
      return;
    case State::kAnswerStart:
      if (!tools) {
        state_ = State::kFree;
        return;
      }
      if (token == vocab_.tool_call_open) {
        if (!name_head_.empty()) {
          force(name_head_, /*hidden=*/false, State::kFree);
        } else {
          state_ = State::kFree;
        }
        return;
      }
      ++leading_whitespace_;  // whitespace: still at the start
      return;
    case State::kForced: {
      const bool last = forced_next_ + 1 == forced_.size();
      // The phrase is hidden; its closing </think> is shown (it ends the reasoning).
      if (forced_hidden_ && !last) hidden_.push_back(index);
      ++forced_next_;
      if (forced_next_ == forced_.size()) state_ = after_forced_;
      return;
    }
    case State::kFree:
      return;
  }
}

}  // namespace anchorage::server

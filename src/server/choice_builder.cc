#include "server/choice_builder.h"

#include <algorithm>
#include <memory>

#include "core/token_prefix.h"
#include "text/tokenizer.h"

namespace anchorage::server {
namespace {

// Special tokens (<|im_start|>, <|endoftext|>, ...) are control, not text; a random or
// confused model may sample them. Added tokens that are not special (<think>, <tool_call>)
// stay: the output parser needs them.
constexpr bool kSkipSpecialTokens = true;

text::OutputParserOptions parser_options(const ChoiceOptions& o) {
  text::OutputParserOptions p;
  p.parse_reasoning = o.chat;
  p.parse_tool_calls = o.chat && o.parse_tool_calls;
  p.tool_call_id_seed = o.tool_call_seed;
  return p;
}

}  // namespace

void ChoiceDelta::append(ChoiceDelta&& other) {
  reasoning += other.reasoning;
  content += other.content;
  if (tool_calls.empty()) first_tool_index = other.first_tool_index;
  for (auto& call : other.tool_calls) tool_calls.push_back(std::move(call));
  for (auto& e : other.logprobs) logprobs.push_back(std::move(e));
}

ChoiceBuilder::ChoiceBuilder(const text::Tokenizer& tokenizer, ChoiceOptions options)
    : options_(std::move(options)),
      decoder_(tokenizer, kSkipSpecialTokens),
      stop_(options_.stop),
      parser_(parser_options(options_)) {}

void ChoiceBuilder::add(const TokenEvent& event, ChoiceDelta* delta) {
  if (event.hidden) return;
  const auto& ids = options_.stop_ids;
  if (std::find(ids.begin(), ids.end(), event.token) != ids.end()) return;
  if (stop_.matched()) return;  // the engine stops at this token too; nothing follows
  if (options_.logprobs) delta->logprobs.push_back(event);
  piece_.clear();
  decoder_.push(event.token, &piece_);
  released_.clear();
  stop_.feed(piece_, &released_);
  route(released_, delta);
}

void ChoiceBuilder::finish(ChoiceDelta* delta) {
  piece_.clear();
  decoder_.flush(&piece_);
  released_.clear();
  stop_.feed(piece_, &released_);
  stop_.flush(&released_);
  route(released_, delta);
  if (options_.chat) {
    events_.clear();
    parser_.finish(&events_);
    take(events_, delta);
  }
}

void ChoiceBuilder::route(std::string_view text, ChoiceDelta* delta) {
  if (text.empty()) return;
  if (!options_.chat) {
    delta->content.append(text);
    return;
  }
  events_.clear();
  parser_.feed(text, &events_);
  take(events_, delta);
}

void ChoiceBuilder::take(std::vector<text::OutputEvent>& events, ChoiceDelta* delta) {
  for (text::OutputEvent& e : events) {
    switch (e.kind) {
      case text::OutputEventKind::kReasoning:
        delta->reasoning += e.text;
        break;
      case text::OutputEventKind::kContent:
        delta->content += e.text;
        break;
      case text::OutputEventKind::kToolCall:
        if (delta->tool_calls.empty()) delta->first_tool_index = e.tool_call_index;
        delta->tool_calls.push_back(std::move(e.tool_call));
        ++n_tool_calls_;
        break;
    }
  }
}

std::function<bool(int32_t)> make_stop_check(const text::Tokenizer& tokenizer,
                                             std::vector<std::string> stops) {
  if (stops.empty()) return nullptr;
  struct Check {
    text::StreamDecoder decoder;
    StopMatcher matcher;
    std::string piece, released;
  };
  auto check = std::make_shared<Check>(Check{
      text::StreamDecoder(tokenizer, kSkipSpecialTokens), StopMatcher(std::move(stops)), {}, {}});
  return [check](int32_t token) {
    check->piece.clear();
    check->released.clear();
    check->decoder.push(token, &check->piece);
    check->matcher.feed(check->piece, &check->released);
    return check->matcher.matched();
  };
}

int64_t echo_parting_point(const text::Tokenizer& tokenizer, std::span<const int32_t> answer) {
  const std::vector<int32_t> again = tokenizer.encode(tokenizer.decode(answer, kSkipSpecialTokens));
  return core::common_prefix(answer, again);
}

}  // namespace anchorage::server

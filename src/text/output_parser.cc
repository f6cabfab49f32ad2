#include "text/output_parser.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "text/chat_prompt.h"
#include "text/python_json.h"
#include "text/tool_call_id.h"

namespace anchorage::text {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolOpen = "<tool_call>";
constexpr std::string_view kToolClose = "</tool_call>";
constexpr const char* kWhitespace = " \t\r\n";

// Length of the longest proper prefix of `tag` that `text` ends with: the bytes to hold back
// because the next piece may complete the tag.
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t k = std::min(text.size(), tag.size() - 1); k > 0; --k) {
    if (text.substr(text.size() - k) == tag.substr(0, k)) return k;
  }
  return 0;
}

void emit_text(OutputEventKind kind, std::string_view text, std::vector<OutputEvent>* events) {
  if (text.empty()) return;
  if (!events->empty() && events->back().kind == kind) {
    events->back().text += text;
    return;
  }
  OutputEvent e;
  e.kind = kind;
  e.text = std::string(text);
  events->push_back(std::move(e));
}

}  // namespace

std::optional<ToolCall> decode_tool_call_body(std::string_view body) {
  Json call;
  try {
    call = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (!call.is_object()) return std::nullopt;
  const auto name = call.find("name");
  if (name == call.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return std::nullopt;
  }
  ToolCall out;
  out.name = name->get_ref<const std::string&>();
  const auto arguments = call.find("arguments");
  if (arguments == call.end()) {
    out.arguments = "{}";
  } else if (arguments->is_string()) {
    out.arguments = arguments->get_ref<const std::string&>();
  } else {
    if (json_deeper_than(*arguments, kMaxJsonDepth)) return std::nullopt;
    // json.dumps spacing is what the template prints back, so a model that writes canonical
    // JSON gets its own bytes back in the next prompt.
    append_python_json(*arguments, &out.arguments);
  }
  return out;
}

OutputParser::OutputParser(OutputParserOptions options) : options_(std::move(options)) {
  if (!options_.parse_reasoning) {
    state_ = State::kContent;
  } else if (options_.starts_in_reasoning) {
    state_ = State::kReasoningLead;
  }
}

void OutputParser::feed(std::string_view piece, std::vector<OutputEvent>* events) {
  ANCHORAGE_CHECK(state_ != State::kDone);
  pending_ += piece;
  while (step(events)) {
  }
}

void OutputParser::finish(std::vector<OutputEvent>* events) {
  ANCHORAGE_CHECK(state_ != State::kDone);
  while (step(events)) {
  }
  switch (state_) {
    case State::kStart:
    case State::kContent:
      emit_text(OutputEventKind::kContent, pending_, events);
      break;
    case State::kReasoning:
      emit_reasoning(pending_, /*final=*/true, events);
      break;
    case State::kToolCall:
      emit_text(OutputEventKind::kContent, tool_open_, events);
      emit_text(OutputEventKind::kContent, pending_, events);
      break;
    case State::kAfterToolCall:
      // Whitespace after the last call is framing; a started tag that never finished is text.
      if (pending_.find_first_not_of(kWhitespace) != std::string::npos) {
        emit_text(OutputEventKind::kContent, pending_, events);
      }
      break;
    case State::kReasoningLead:
    case State::kContentLead:
    case State::kDone:
      break;
  }
  pending_.clear();
  state_ = State::kDone;
}

// Runs one transition; returns false when it needs more input.
bool OutputParser::step(std::vector<OutputEvent>* events) {
  switch (state_) {
    case State::kStart:
      return step_start();
    case State::kReasoningLead:
    case State::kContentLead: {
      const size_t k = pending_.find_first_not_of('\n');
      if (k == std::string::npos) {
        pending_.clear();
        return false;
      }
      pending_.erase(0, k);
      state_ = state_ == State::kReasoningLead ? State::kReasoning : State::kContent;
      return true;
    }
    case State::kReasoning:
      return step_reasoning(events);
    case State::kContent:
      return step_content(events);
    case State::kToolCall:
      return step_tool_call(events);
    case State::kAfterToolCall:
      return step_after_tool_call();
    case State::kDone:
      return false;
  }
  return false;
}

bool OutputParser::step_start() {
  const size_t first = pending_.find_first_not_of(kWhitespace);
  if (first == std::string::npos) return false;
  const std::string_view rest = std::string_view(pending_).substr(first);
  if (rest.starts_with(kThinkOpen)) {
    pending_.erase(0, first + kThinkOpen.size());
    state_ = State::kReasoningLead;
    return true;
  }
  if (kThinkOpen.starts_with(rest)) return false;
  state_ = State::kContent;  // no think block: everything, leading whitespace too, is content
  return true;
}

bool OutputParser::step_reasoning(std::vector<OutputEvent>* events) {
  const std::string_view text = pending_;
  const size_t at = text.find(kThinkClose);
  if (at != std::string_view::npos) {
    emit_reasoning(text.substr(0, at), /*final=*/true, events);
    pending_.erase(0, at + kThinkClose.size());
    state_ = State::kContentLead;
    return true;
  }
  const size_t ready = text.size() - partial_tag_suffix(text, kThinkClose);
  emit_reasoning(text.substr(0, ready), /*final=*/false, events);
  pending_.erase(0, ready);
  return false;
}

// Reasoning's trailing newlines are held: the template strips them before </think>, so they are
// emitted only once more reasoning text follows them.
void OutputParser::emit_reasoning(std::string_view text, bool final,
                                  std::vector<OutputEvent>* events) {
  size_t trailing = 0;
  while (trailing < text.size() && text[text.size() - 1 - trailing] == '\n') ++trailing;
  if (trailing == text.size()) {
    held_newlines_ = final ? 0 : held_newlines_ + trailing;
    return;
  }
  if (held_newlines_ > 0) {
    emit_text(OutputEventKind::kReasoning, std::string(held_newlines_, '\n'), events);
  }
  emit_text(OutputEventKind::kReasoning, text.substr(0, text.size() - trailing), events);
  held_newlines_ = final ? 0 : trailing;
}

bool OutputParser::step_content(std::vector<OutputEvent>* events) {
  const std::string_view text = pending_;
  if (!options_.parse_tool_calls) {
    emit_text(OutputEventKind::kContent, text, events);
    pending_.clear();
    return false;
  }
  const size_t at = text.find(kToolOpen);
  if (at != std::string_view::npos) {
    // The template writes "\n" between content and a call; that newline is framing.
    const size_t framing = (at > 0 && text[at - 1] == '\n') ? 1 : 0;
    emit_text(OutputEventKind::kContent, text.substr(0, at - framing), events);
    tool_open_ = std::string(text.substr(at - framing, framing + kToolOpen.size()));
    pending_.erase(0, at + kToolOpen.size());
    tool_scanned_ = 0;
    state_ = State::kToolCall;
    return true;
  }
  size_t keep = partial_tag_suffix(text, kToolOpen);
  if (keep < text.size() && text[text.size() - keep - 1] == '\n') ++keep;
  emit_text(OutputEventKind::kContent, text.substr(0, text.size() - keep), events);
  pending_.erase(0, text.size() - keep);
  return false;
}

bool OutputParser::step_tool_call(std::vector<OutputEvent>* events) {
  const std::string_view text = pending_;
  // Resume the search where the last feed stopped (minus a possible partial tag) so a long
  // call streamed token by token is scanned once, not once per token.
  const size_t from = tool_scanned_ >= kToolClose.size() ? tool_scanned_ - kToolClose.size() : 0;
  const size_t at = text.find(kToolClose, from);
  if (at == std::string_view::npos) {
    tool_scanned_ = text.size();
    return false;
  }
  std::optional<ToolCall> call = decode_tool_call_body(text.substr(0, at));
  if (call.has_value()) {
    call->id = options_.tool_call_id ? options_.tool_call_id(n_tool_calls_)
                                     : make_tool_call_id(options_.tool_call_id_seed, n_tool_calls_);
    OutputEvent e;
    e.kind = OutputEventKind::kToolCall;
    e.tool_call = std::move(*call);
    e.tool_call_index = n_tool_calls_++;
    events->push_back(std::move(e));
    state_ = State::kAfterToolCall;
  } else {
    emit_text(OutputEventKind::kContent, tool_open_, events);
    emit_text(OutputEventKind::kContent, text.substr(0, at + kToolClose.size()), events);
    state_ = State::kContent;
  }
  pending_.erase(0, at + kToolClose.size());
  tool_open_.clear();
  return true;
}

bool OutputParser::step_after_tool_call() {
  const size_t first = pending_.find_first_not_of(kWhitespace);
  if (first == std::string::npos) return false;
  const std::string_view rest = std::string_view(pending_).substr(first);
  if (rest.starts_with(kToolOpen)) {
    tool_open_ = pending_.substr(0, first + kToolOpen.size());
    pending_.erase(0, first + kToolOpen.size());
    tool_scanned_ = 0;
    state_ = State::kToolCall;
    return true;
  }
  if (kToolOpen.starts_with(rest)) return false;
  state_ = State::kContent;  // text after a call: kept, with the whitespace before it
  return true;
}

ParsedOutput parse_output(std::string_view text, const OutputParserOptions& options) {
  OutputParser parser(options);
  std::vector<OutputEvent> events;
  parser.feed(text, &events);
  parser.finish(&events);
  ParsedOutput out;
  for (OutputEvent& e : events) {
    switch (e.kind) {
      case OutputEventKind::kReasoning:
        out.reasoning_content += e.text;
        break;
      case OutputEventKind::kContent:
        out.content += e.text;
        break;
      case OutputEventKind::kToolCall:
        out.tool_calls.push_back(std::move(e.tool_call));
        break;
    }
  }
  return out;
}

}  // namespace anchorage::text

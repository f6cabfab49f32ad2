#include "server/compaction.h"

namespace anchorage::server {
namespace {

constexpr std::string_view kOpen = "<conversation>\n";
constexpr std::string_view kClose = "\n</conversation>";
constexpr std::string_view kUserTag = "[User]: ";
// The history must open near the start: opencode puts one short sentence before it. A user
// message that merely quotes a <conversation> tag further down is not a compaction.
constexpr size_t kMaxLead = 256;

// The text after `tag` up to the end of its line, for the tag at `at`.
std::string_view line_after(std::string_view s, size_t at, std::string_view tag) {
  std::string_view rest = s.substr(at + tag.size());
  return rest.substr(0, rest.find('\n'));
}

}  // namespace

std::optional<CompactionMode> parse_compaction_mode(std::string_view name) {
  if (name == "client") return CompactionMode::kClient;
  if (name == "continuation") return CompactionMode::kContinuation;
  return std::nullopt;
}

std::string_view compaction_mode_name(CompactionMode mode) {
  return mode == CompactionMode::kContinuation ? "continuation" : "client";
}

std::optional<CompactionTurn> recognise_compaction(const text::ChatPrompt& chat) {
  if (!chat.tools.empty() || chat.messages.size() != 2 || !chat.add_generation_prompt)
    return std::nullopt;
  const text::ChatMessage& system = chat.messages[0];
  const text::ChatMessage& user = chat.messages[1];
  if (system.role != text::ChatRole::kSystem || user.role != text::ChatRole::kUser)
    return std::nullopt;
  const std::string_view u = user.content;
  const size_t open = u.find(kOpen);
  if (open == std::string_view::npos || open > kMaxLead) return std::nullopt;
  const size_t body = open + kOpen.size();
  const size_t close = u.rfind(kClose);
  if (close == std::string_view::npos || close < body) return std::nullopt;
  const std::string_view history = u.substr(body, close - body);

  // Every "[User]: " that starts a line of the history; the first and the last are the guard.
  std::string_view first, last;
  for (size_t at = 0; (at = history.find(kUserTag, at)) != std::string_view::npos;
       at += kUserTag.size()) {
    if (at != 0 && history[at - 1] != '\n') continue;
    const std::string_view line = line_after(history, at, kUserTag);
    if (line.empty()) continue;
    if (first.empty()) first = line;
    last = line;
  }
  if (first.empty()) return std::nullopt;

  std::string_view instructions = u.substr(close + kClose.size());
  while (!instructions.empty() && instructions.front() == '\n') instructions.remove_prefix(1);

  CompactionTurn turn;
  turn.first_user_line = std::string(first);
  turn.last_user_line = std::string(last);
  // Close the assistant turn the record stops in (its last sampled token, <|im_end|> when it
  // finished, was never forwarded), then the one new user turn, then the answer without
  // thinking — what the template renders for enable_thinking: false.
  turn.turn_text = "<|im_end|>\n<|im_start|>user\n";
  turn.turn_text += system.content;
  turn.turn_text += "\n\n";
  turn.turn_text += instructions;
  turn.turn_text += "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  return turn;
}

bool record_matches(const CompactionTurn& turn, std::string_view record_text) {
  return !turn.first_user_line.empty() &&
         record_text.find(turn.first_user_line) != std::string_view::npos &&
         record_text.find(turn.last_user_line) != std::string_view::npos;
}

}  // namespace anchorage::server

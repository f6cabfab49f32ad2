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

// opencode 1.18.33's summarization agent (the system text) and its instructions after the
// history (tests/corpus/chat_requests/opencode_07.json): the summary written ahead uses them
// until a compaction request of the client brings its own.
constexpr std::string_view kOpencodeSystem =
    R"~(You are a context summarization agent. You are given a conversation between a user and an agent. Your goal is to produce a structured summary matching the format specified so another coding agent can continue the work.

Always follow the exact output structure requested by the user prompt. Keep every section, preserve exact file paths and identifiers when known, and prefer terse bullets over paragraphs.

Do not continue the conversation. Do not respond to any questions in the conversation. Only output the structured summary in the exact format requested by the user prompt. Respond in the same language as the conversation.
)~";
constexpr std::string_view kOpencodeInstructions =
    R"~(Create a new anchored summary from the conversation history in the <conversation> tags above so another coding agent can continue the work.

Output exactly the Markdown structure shown inside <template> and keep the section order unchanged. Do not include the <template> tags in your response.
<template>
## Objective
- [one or two brief sentences describing what the user is trying to accomplish]

## Important Details
- [constraints/preferences, decisions and why, important facts/assumptions, exact context needed to continue, or "(none)"]

## Work State
### Completed
- [finished work, verified facts, or changes made; otherwise "(none)"]

### Active
- [current work, partial changes, or investigation state; otherwise "(none)"]

### Blocked
- [blockers, failing commands, or unknowns; otherwise "(none)"]

## Next Move
1. [immediate concrete action, or "(none)"]
2. [next action if known, or "(none)"]

## Relevant Files
- [file or directory path: why it matters, or "(none)"]
</template>

Rules:
- Keep every section, even when empty.
- Use terse bullets, not prose paragraphs.
- Preserve exact file paths, symbols, commands, error strings, URLs, and identifiers when known.
- Do not mention the summary process or that context was compacted.)~";

}  // namespace

std::string continuation_turn(std::string_view system, std::string_view instructions) {
  // Close the assistant turn the record stops in (its last sampled token, <|im_end|> when it
  // finished, was never forwarded), then the one new user turn, then the answer without
  // thinking — what the template renders for enable_thinking: false.
  std::string t = "<|im_end|>\n<|im_start|>user\n";
  t += system;
  t += "\n\n";
  t += instructions;
  t += "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  return t;
}

std::string opencode_default_turn() {
  return continuation_turn(kOpencodeSystem, kOpencodeInstructions);
}

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
  turn.turn_text = continuation_turn(system.content, instructions);
  return turn;
}

bool record_matches(const CompactionTurn& turn, std::string_view record_text) {
  return !turn.first_user_line.empty() &&
         record_text.find(turn.first_user_line) != std::string_view::npos &&
         record_text.find(turn.last_user_line) != std::string_view::npos;
}

}  // namespace anchorage::server

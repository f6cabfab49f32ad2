// Compaction as a continuation (docs/compaction.md). opencode compacts a conversation by sending
// it again flattened into ONE user message ("Here is the conversation so far: <conversation>
// [User]: … </conversation>" and its summary instructions) after its summarization agent's own
// system text. That text shares no token with the conversation the engine holds, so served as
// sent it is a cold prefill of most of the conversation. With `--compaction continuation` it is
// served instead as the conversation's own tokens up to its end anchor followed by one user turn
// carrying the client's system text and instructions (thinking off): the prefill resumes at the
// end anchor and reads only that turn.
//
// This module is the text side: recognising the request's shape, the guard that the held
// conversation is the one the client flattened, and the turn appended after it. The engine side
// (finding the record, serving it) is EngineCaches::serve.
//
// Thread safety: pure functions over plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "text/chat_prompt.h"

namespace anchorage::server {

enum class CompactionMode {
  kClient,        // every compaction is served as sent (the default: the client's own tokens)
  kContinuation,  // a recognised compaction continues the session's held conversation
};

std::optional<CompactionMode> parse_compaction_mode(std::string_view name);
std::string_view compaction_mode_name(CompactionMode mode);

// A recognised compaction request. Held by the job on the engine thread only; never logged.
struct CompactionTurn {
  // What the engine reads after the conversation's end anchor: the end of the assistant turn
  // the record stops in, one user turn (the client's system text, then its instructions after
  // the history) and an assistant turn with thinking off.
  std::string turn_text;
  // The first line of the history's first and last user entries: the guard's evidence.
  std::string first_user_line;
  std::string last_user_line;
};

// opencode's shape (1.18): no tools; exactly a system message and a user message; the user
// message starts with the history wrapped in <conversation> … </conversation> holding at least
// one "[User]: " entry, followed by the instructions. nullopt for anything else.
std::optional<CompactionTurn> recognise_compaction(const text::ChatPrompt& chat);

// What the engine reads after the record: the end of its assistant turn, one user turn of
// `system` then `instructions`, and an assistant turn with thinking off.
std::string continuation_turn(std::string_view system, std::string_view instructions);
// The turn of opencode 1.18.33's compaction (its system text and instructions): what the
// summary written ahead uses until a compaction request brings the client's own.
std::string opencode_default_turn();

// --compaction-prepare (docs/compaction.md "The summary written ahead").
struct CompactionPrepareOptions {
  bool enabled = false;        // --compaction-prepare on|off
  double idle_s = 30.0;        // --compaction-idle-s: no request for this long
  int64_t min_tokens = 32768;  // --compaction-min-tokens: the conversation's end anchor
  int64_t max_tokens = 4096;   // until a compaction request says (opencode sends 4096)
};

// The guard: true when both user lines appear in the held conversation's text (its tokens'
// bytes). Any miss serves the request as sent.
bool record_matches(const CompactionTurn& turn, std::string_view record_text);

}  // namespace anchorage::server

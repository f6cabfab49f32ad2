// ChoiceBuilder: turns a job's TokenEvents into what the response shows, on the HTTP thread:
// tokens -> UTF-8 text (text::StreamDecoder, special tokens skipped) -> stop strings cut
// (StopMatcher) -> for chat, <think> and <tool_call> split out (text::OutputParser). Each
// add() yields a ChoiceDelta: the text and tool calls that became final, and the tokens whose
// log-probabilities go with them. Stop ids are counted by the job but never shown.
//
// make_stop_check() builds the engine thread's side of the stop-string rule with the same
// decoding, so both sides stop at the same token.
//
// Thread safety: one ChoiceBuilder per response, used by one thread. The tokenizer is shared
// (its const methods are thread-safe) and must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "server/generation_job.h"
#include "server/stop_matcher.h"
#include "text/output_parser.h"
#include "text/stream_decoder.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

struct ChoiceDelta {
  std::string reasoning;
  std::string content;
  std::vector<text::ToolCall> tool_calls;  // complete calls
  size_t first_tool_index = 0;             // OpenAI's index of tool_calls[0]
  std::vector<TokenEvent> logprobs;        // the tokens behind this delta, when asked for

  bool has_output() const { return !reasoning.empty() || !content.empty() || !tool_calls.empty(); }
  // Appends another delta (the non-streamed response accumulates them all).
  void append(ChoiceDelta&& other);
};

struct ChoiceOptions {
  bool chat = true;               // false: /v1/completions, raw text only
  bool parse_tool_calls = false;  // chat only
  bool logprobs = false;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_ids;
  uint64_t tool_call_seed = 0;  // text::make_tool_call_id(seed, index)
};

class ChoiceBuilder {
 public:
  ChoiceBuilder(const text::Tokenizer& tokenizer, ChoiceOptions options);

  void add(const TokenEvent& event, ChoiceDelta* delta);
  // After the last event: releases what was held back.
  void finish(ChoiceDelta* delta);
  bool saw_tool_calls() const { return n_tool_calls_ > 0; }

 private:
  void route(std::string_view text, ChoiceDelta* delta);
  void take(std::vector<text::OutputEvent>& events, ChoiceDelta* delta);

  ChoiceOptions options_;
  text::StreamDecoder decoder_;
  StopMatcher stop_;
  text::OutputParser parser_;
  std::string piece_;
  std::string released_;
  std::vector<text::OutputEvent> events_;
  size_t n_tool_calls_ = 0;
};

// The engine thread's stop-string check for GenerationJob::stop_after (null when there are
// no stop strings). Decodes exactly as ChoiceBuilder does.
std::function<bool(int32_t)> make_stop_check(const text::Tokenizer& tokenizer,
                                             std::vector<std::string> stops);

// Where a client's copy of an answer first differs from the ids the engine generated (0 to
// answer.size()): the client sends back the text the response showed — decoded as
// ChoiceBuilder decodes it, special tokens skipped — and its next prompt encodes it again. A
// non-canonical sequence (BPE would merge or split it otherwise) or a special token the
// response never showed parts it there. EngineCaches takes the echo anchor at this point.
int64_t echo_parting_point(const text::Tokenizer& tokenizer, std::span<const int32_t> answer);

}  // namespace anchorage::server

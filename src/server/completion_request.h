// CompletionRequest: a /v1/chat/completions or /v1/completions body after parsing and
// checking (request_parser.h) — every field the server acts on, in our types. What each field
// means and which values are refused is in docs/http-api.md.
//
// Thread safety: a plain value, built by one HTTP thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "server/output_constraint.h"
#include "server/session.h"
#include "text/chat_prompt.h"

namespace anchorage::server {

enum class Endpoint { kChat, kCompletion };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;  // as sent ("" when absent); any name is served by the one model

  // kChat: the conversation, checked and normalised by text::parse_chat_request.
  text::ChatPrompt chat;
  // kChat: parse <tool_call> blocks into tool_calls (tools were sent and tool_choice is not
  // "none").
  bool parse_tool_calls = false;
  // kChat: tool_choice "required" / a named function and reasoning_budget, enforced by
  // constrained decoding (output_constraint.h).
  ConstraintSpec constraint;

  // kCompletion: a text prompt, or token ids when prompt_is_ids.
  std::string prompt_text;
  std::vector<int32_t> prompt_ids;
  bool prompt_is_ids = false;

  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // llama-server's return_progress: a streamed answer also carries prompt_progress chunks
  // while the prompt is read (ignored unless stream).
  bool return_progress = false;

  std::optional<int64_t> max_tokens;  // max_completion_tokens, else max_tokens
  engine::SamplingParams sampling;    // seed filled by the server when the client sent none
  bool has_seed = false;
  std::vector<std::string> stop;  // strings; <|im_end|> and <|endoftext|> always stop too
  // llama.cpp's and vLLM's ignore_eos: the model's end-of-sequence ids (<|im_end|>,
  // <|endoftext|>) do not end the answer; max_tokens, the context and stop strings still do.
  bool ignore_eos = false;

  // Log-probabilities. Chat: logprobs (bool) + top_logprobs; completions: logprobs (int) is
  // the number of alternatives. top_logprobs is the count of alternatives per token.
  bool logprobs = false;
  int top_logprobs = 0;

  SessionKey session;
};

// The most alternatives a request may ask for per token (OpenAI's limit for chat).
inline constexpr int kMaxTopLogprobs = 20;
// The most stop strings, and the longest one, a request may send.
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 256;

}  // namespace anchorage::server

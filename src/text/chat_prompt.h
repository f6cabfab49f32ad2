// ChatPrompt: an OpenAI chat request reduced to what the Qwen3 chat template reads, checked and
// normalised, so the renderer (qwen3_chat_template.h) works on plain strings and cannot fail.
//
// What parse_chat_request accepts from the request body (every other key is ignored):
// - messages: a non-empty array; each element an object with
//     role: "system" | "user" | "assistant" | "tool" (anything else is an error: the template
//           would drop the message silently, which hides a client bug);
//     content: a string, null or absent (-> ""), or an array of {"type": "text", "text": s}
//           parts joined with "\n" (vLLM's and llama.cpp's rule; the real template raises on a
//           list or on null, so this normalisation happens before rendering, and the golden
//           tests render the normalised message through Jinja2);
//     reasoning_content (assistant): a string, null or absent;
//     tool_calls (assistant): null or an array of objects, each {"function": {"name": s,
//           "arguments": a}} or, as the template also allows, {"name": s, "arguments": a};
//           a string `a` is printed verbatim, any other JSON value as json.dumps prints it.
// - tools: null, absent or an array of objects, each printed whole with json.dumps.
// - add_generation_prompt: bool, default true (vLLM's extension field).
// - chat_template_kwargs.enable_thinking: bool, default true (only `false` changes the prompt).
// Errors are InvalidArgument naming the field, e.g. "messages[3].role"; never the user's text.
//
// Thread safety: pure functions; a ChatPrompt is a plain value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace anchorage::text {

enum class ChatRole { kSystem, kUser, kAssistant, kTool };

// One assistant tool call as the template prints it.
struct ChatToolCall {
  std::string name;
  std::string arguments;  // the exact text printed after "arguments": (verbatim or json.dumps)
};

struct ChatMessage {
  ChatRole role = ChatRole::kUser;
  std::string content;
  // Absent and null are the same to the template ("is defined and is not none"); "" is not:
  // an explicit empty reasoning stops the template from splitting <think> out of content.
  std::optional<std::string> reasoning_content;
  std::vector<ChatToolCall> tool_calls;
};

struct ChatPrompt {
  std::vector<ChatMessage> messages;  // never empty after parse_chat_request
  std::vector<std::string> tools;     // each tool already printed with json.dumps
  bool add_generation_prompt = true;
  bool enable_thinking = true;
};

struct ChatRequestOptions {
  // vLLM parses every string `arguments` before rendering, so the template re-prints it with
  // tojson; the raw template prints the string verbatim. With this on, a string that parses as a
  // JSON object or array is re-printed with json.dumps (any other string stays verbatim). Off by
  // default: the default output is the template's own.
  bool parse_tool_arguments = false;
};

// Nesting limit for JSON values we print (tools, object arguments). CPython's json.dumps hits
// its recursion limit near 1000; 256 keeps our recursive printer far from the stack's end.
inline constexpr int kMaxJsonDepth = 256;

// Reads and checks the request body described above.
core::Result<ChatPrompt> parse_chat_request(const nlohmann::ordered_json& body,
                                            const ChatRequestOptions& options = {});

// True when `value` nests arrays/objects deeper than `max_depth` (a scalar has depth 0).
bool json_deeper_than(const nlohmann::ordered_json& value, int max_depth);

}  // namespace anchorage::text

// Each block below cites the template statement it mirrors. Python string methods used by the
// template (strip('\n'), split('</think>')[-1], ...) only touch ASCII bytes, so working on UTF-8
// bytes gives the same result as Python working on code points.
#include "text/qwen3_chat_template.h"

#include <string_view>

#include "core/check.h"

namespace anchorage::text {
namespace {

constexpr std::string_view kToolsHeader =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsFooter =
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
    "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

std::string_view lstrip_newlines(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  return s;
}

std::string_view rstrip_newlines(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

std::string_view strip_newlines(std::string_view s) {
  return rstrip_newlines(lstrip_newlines(s));
}

// `x.split(sep)[-1]`: the text after the last separator (all of x when there is none).
std::string_view after_last(std::string_view s, std::string_view sep) {
  const size_t at = s.rfind(sep);
  return at == std::string_view::npos ? s : s.substr(at + sep.size());
}

// `x.split(sep)[0]`: the text before the first separator.
std::string_view before_first(std::string_view s, std::string_view sep) {
  return s.substr(0, s.find(sep));
}

const char* role_name(ChatRole role) {
  switch (role) {
    case ChatRole::kSystem:
      return "system";
    case ChatRole::kUser:
      return "user";
    case ChatRole::kAssistant:
      return "assistant";
    case ChatRole::kTool:
      return "tool";
  }
  return "";
}

bool is_tool_response_wrapper(std::string_view content) {
  return content.starts_with("<tool_response>") && content.ends_with("</tool_response>");
}

// `ns.last_query_index`: the last user message that is not a wrapped tool response; the
// assistant turns after it keep their <think> block. Defaults to the last message.
size_t last_query_index(const std::vector<ChatMessage>& messages) {
  for (size_t k = messages.size(); k-- > 0;) {
    const ChatMessage& m = messages[k];
    if (m.role == ChatRole::kUser && !is_tool_response_wrapper(m.content)) return k;
  }
  return messages.size() - 1;
}

void render_tools_system(const ChatPrompt& prompt, std::string* out) {
  *out += "<|im_start|>system\n";
  if (prompt.messages[0].role == ChatRole::kSystem) {
    *out += prompt.messages[0].content;
    *out += "\n\n";
  }
  *out += kToolsHeader;
  for (const std::string& tool : prompt.tools) {
    out->push_back('\n');
    *out += tool;
  }
  *out += kToolsFooter;
}

void render_assistant(const ChatMessage& m, bool keeps_think, bool is_last, std::string* out) {
  std::string_view content = m.content;
  std::string_view reasoning;
  if (m.reasoning_content.has_value()) {
    reasoning = *m.reasoning_content;
  } else if (content.find("</think>") != std::string_view::npos) {
    // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
    reasoning =
        lstrip_newlines(after_last(rstrip_newlines(before_first(content, "</think>")), "<think>"));
    // content.split('</think>')[-1].lstrip('\n')
    content = lstrip_newlines(after_last(content, "</think>"));
  }
  *out += "<|im_start|>assistant\n";
  // `loop.last or (not loop.last and reasoning_content)`: the final message always shows a
  // think block (possibly empty), earlier ones only when they have reasoning.
  if (keeps_think && (is_last || !reasoning.empty())) {
    *out += "<think>\n";
    *out += strip_newlines(reasoning);
    *out += "\n</think>\n\n";
    *out += lstrip_newlines(content);
  } else {
    *out += content;
  }
  for (size_t j = 0; j < m.tool_calls.size(); ++j) {
    // `(loop.first and content) or (not loop.first)` with the split, unstripped content.
    if (j > 0 || !content.empty()) out->push_back('\n');
    *out += "<tool_call>\n{\"name\": \"";
    *out += m.tool_calls[j].name;
    *out += "\", \"arguments\": ";
    *out += m.tool_calls[j].arguments;
    *out += "}\n</tool_call>";
  }
  *out += "<|im_end|>\n";
}

}  // namespace

std::string render_qwen3_prompt(const ChatPrompt& prompt) {
  const std::vector<ChatMessage>& messages = prompt.messages;
  ANCHORAGE_CHECK(!messages.empty());
  std::string out;
  if (!prompt.tools.empty()) {
    render_tools_system(prompt, &out);
  } else if (messages[0].role == ChatRole::kSystem) {
    out += "<|im_start|>system\n";
    out += messages[0].content;
    out += "<|im_end|>\n";
  }
  const size_t query = last_query_index(messages);
  const size_t n = messages.size();
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    switch (m.role) {
      case ChatRole::kSystem:
        if (i == 0) break;  // rendered above, with or without tools
        [[fallthrough]];
      case ChatRole::kUser:
        out += "<|im_start|>";
        out += role_name(m.role);
        out.push_back('\n');
        out += m.content;
        out += "<|im_end|>\n";
        break;
      case ChatRole::kAssistant:
        render_assistant(m, i > query, i + 1 == n, &out);
        break;
      case ChatRole::kTool:
        // Consecutive tool messages share one user turn.
        if (i == 0 || messages[i - 1].role != ChatRole::kTool) out += "<|im_start|>user";
        out += "\n<tool_response>\n";
        out += m.content;
        out += "\n</tool_response>";
        if (i + 1 == n || messages[i + 1].role != ChatRole::kTool) out += "<|im_end|>\n";
        break;
    }
  }
  if (prompt.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (!prompt.enable_thinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

core::Result<std::string> render_qwen3_chat(const nlohmann::ordered_json& body,
                                            const ChatRequestOptions& options) {
  auto prompt = parse_chat_request(body, options);
  if (!prompt) return prompt.error();
  return render_qwen3_prompt(*prompt);
}

}  // namespace anchorage::text

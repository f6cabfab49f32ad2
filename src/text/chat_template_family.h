// Which native renderer a model file's chat template gets (docs/chat-template.md "Templates
// from a model file"). anchorage has no Jinja engine: a template is accepted only when it is
// recognised as the Qwen3 / Qwen3.5 family, which text/qwen3_chat_template.h renders.
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "core/status.h"

namespace anchorage::text {

enum class ChatTemplateFamily {
  kQwen3,  // Qwen3, Qwen3-Next, Qwen3.5: ChatML turns, <tool_call> JSON, <think> reasoning
};

// The family of a Jinja template. Recognised as kQwen3 when it is the embedded Qwen3 template
// byte for byte, or when it holds every marker of the family: the ChatML turn markers
// "<|im_start|>" and "<|im_end|>", the tool-call markers "<tool_call>" and "</tool_call>",
// the tool-response marker "<tool_response>", and the reasoning marker "</think>".
// Unsupported otherwise, with a message saying the template is not recognised (and how to
// force one).
core::Result<ChatTemplateFamily> recognize_chat_template(std::string_view jinja);

// A family by name, as --chat-template gives it: "qwen3" (also "qwen3.5", "qwen3next").
// InvalidArgument for any other name.
core::Result<ChatTemplateFamily> chat_template_family_by_name(std::string_view name);

}  // namespace anchorage::text

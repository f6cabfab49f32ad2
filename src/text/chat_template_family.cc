// Chat-template recognition by markers.
#include "text/chat_template_family.h"

#include "text/qwen3_chat_template.h"

namespace anchorage::text {

core::Result<ChatTemplateFamily> recognize_chat_template(std::string_view jinja) {
  if (is_qwen3_chat_template(jinja)) return ChatTemplateFamily::kQwen3;
  bool all = !jinja.empty();
  for (std::string_view marker : {"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                                  "<tool_response>", "</think>"}) {
    all = all && jinja.find(marker) != std::string_view::npos;
  }
  if (all) return ChatTemplateFamily::kQwen3;
  return core::Status::unsupported(
      "the model file's chat template is not recognised as the Qwen3 / Qwen3.5 family "
      "(anchorage renders only that family natively; --chat-template qwen3 forces it)");
}

core::Result<ChatTemplateFamily> chat_template_family_by_name(std::string_view name) {
  if (name == "qwen3" || name == "qwen3.5" || name == "qwen3next") {
    return ChatTemplateFamily::kQwen3;
  }
  return core::Status::invalid_argument("--chat-template: unknown template '" + std::string(name) +
                                        "' (known: qwen3)");
}

}  // namespace anchorage::text

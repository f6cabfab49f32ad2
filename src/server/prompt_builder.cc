#include "server/prompt_builder.h"

#include <string>

#include "text/qwen3_chat_template.h"
#include "text/tokenizer.h"

namespace anchorage::server {

int64_t last_user_message_start(const std::vector<int32_t>& ids, const text::Tokenizer& tokenizer) {
  const std::optional<int32_t> start = tokenizer.token_id("<|im_start|>");
  const std::optional<int32_t> user = tokenizer.token_id("user");
  if (!start || !user) return -1;
  for (size_t i = ids.size(); i-- > 1;)
    if (ids[i] == *user && ids[i - 1] == *start) return int64_t(i - 1);
  return -1;
}

std::optional<ApiError> build_prompt(const CompletionRequest& request,
                                     const text::Tokenizer& tokenizer, int64_t vocab_size,
                                     int64_t capacity, std::vector<int32_t>* ids,
                                     std::string* chat_text) {
  const bool chat = request.endpoint == Endpoint::kChat;
  const char* field = chat ? "messages" : "prompt";
  ids->clear();
  if (chat) {
    std::string rendered = text::render_qwen3_prompt(request.chat);
    tokenizer.encode(rendered, ids);
    if (chat_text != nullptr) *chat_text = std::move(rendered);
  } else if (request.prompt_is_ids) {
    for (size_t i = 0; i < request.prompt_ids.size(); ++i) {
      if (request.prompt_ids[i] >= vocab_size) {
        return field_error(
            "prompt[" + std::to_string(i) + "]",
            "token id is outside the vocabulary (" + std::to_string(vocab_size) + " ids)");
      }
    }
    *ids = request.prompt_ids;
  } else {
    tokenizer.encode(request.prompt_text, ids);
  }
  if (ids->empty()) return field_error(field, "the prompt has no tokens");
  if (int64_t(ids->size()) > capacity) {
    return field_error(field,
                       "the prompt has " + std::to_string(ids->size()) +
                           " tokens, more than the context of " + std::to_string(capacity),
                       "context_length_exceeded");
  }
  return std::nullopt;
}

}  // namespace anchorage::server

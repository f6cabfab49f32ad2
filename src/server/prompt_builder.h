// build_prompt: a checked request's prompt as token ids — chat: the Qwen3 chat template
// (text::render_qwen3_prompt) then the tokenizer; completions: the tokenizer, or the ids as
// sent — measured against the model: ids inside the vocabulary, a prompt that is not empty
// and fits the context (400 "context_length_exceeded" naming messages / prompt otherwise).
// chat_text (may be null) receives a chat's rendered text (the caches' end alignment).
//
// Thread safety: pure function; runs on an HTTP thread (the tokenizer is thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/completion_request.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

// Where the last user message starts in a chat prompt's ids: the index of its last
// "<|im_start|>user" pair (the disk tier's head anchors go below it: the next session in the
// same folder parts there). -1 when there is none.
int64_t last_user_message_start(const std::vector<int32_t>& ids, const text::Tokenizer& tokenizer);

std::optional<ApiError> build_prompt(const CompletionRequest& request,
                                     const text::Tokenizer& tokenizer, int64_t vocab_size,
                                     int64_t capacity, std::vector<int32_t>* ids,
                                     std::string* chat_text = nullptr);

}  // namespace anchorage::server

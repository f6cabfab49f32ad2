// The request parser: a /v1/chat/completions or /v1/completions body (bytes from the network)
// into a checked CompletionRequest, or an ApiError naming the field at fault. Nothing here
// needs the model: token ids are range-checked and the prompt measured against the context
// when the prompt is built (prompt_builder.h). tests/fuzz/request_parser_fuzzer.cc feeds it
// arbitrary bytes.
//
// Unknown fields are ignored (clients send many; docs/http-api.md lists the ones we read, and
// the ones accepted but without effect).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "server/api_error.h"
#include "server/completion_request.h"

namespace anchorage::server {

// session_header: the value of the x-session-id header, if the request had one.
std::optional<ApiError> parse_chat_body(std::string_view body,
                                        std::optional<std::string_view> session_header,
                                        CompletionRequest* out);
std::optional<ApiError> parse_completion_body(std::string_view body,
                                              std::optional<std::string_view> session_header,
                                              CompletionRequest* out);

}  // namespace anchorage::server

// ApiError: a refused request as the OpenAI API reports it — an HTTP status and the body
// {"error": {"message", "type", "param", "code"}}. `param` names the request field at fault
// (e.g. "messages[2].role", "max_tokens"); a message never quotes what the client sent.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace anchorage::server {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" renders as null
  std::string code;   // "" renders as null
};

// 400 naming a field: "<param>: <why>" becomes the message.
ApiError field_error(std::string param, std::string_view why, std::string code = "invalid_value");

// A Status from the text or engine layer. Their InvalidArgument messages start with the field
// ("messages[3].role: unknown role"); that prefix becomes `param` (under param_prefix, e.g.
// "prompt"), or default_param when the message names none.
ApiError error_from_status(const core::Status& status, std::string_view default_param);

// 413, 429, 500, 503 and 404 in the same shape.
ApiError body_too_large_error(size_t limit_bytes);
ApiError queue_full_error();
ApiError shutting_down_error();
ApiError internal_error(std::string_view what);
// 503 with Retry-After: the memory budget cannot fit the prefill (docs/cache.md "Memory").
ApiError memory_full_error();
// 409: the cache peek found the engine busy.
ApiError cache_busy_error();
ApiError not_found_error();

// The JSON body: {"error": {...}}.
std::string render_error_body(const ApiError& error);

}  // namespace anchorage::server

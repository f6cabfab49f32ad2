#include "server/api_error.h"

#include <string>

#include "server/json_fields.h"
#include "server/json_writer.h"

namespace anchorage::server {

ApiError field_error(std::string param, std::string_view why, std::string code) {
  ApiError e;
  e.http_status = 400;
  e.message = param.empty() ? std::string(why) : param + ": " + std::string(why);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError error_from_status(const core::Status& status, std::string_view default_param) {
  const std::string& m = status.message();
  std::string param(default_param);
  // The text layer's messages are "<field>: <why>" where the field is a path such as
  // "messages[3].tool_calls[0].function"; anything with a space before the colon is prose.
  const size_t colon = m.find(": ");
  if (colon != std::string::npos && colon > 0 && m.find(' ') > colon) param = m.substr(0, colon);
  ApiError e;
  e.message = m;
  e.param = param;
  switch (status.code()) {
    case core::StatusCode::kInvalidArgument:
      e.http_status = 400;
      // The text layer marks a value of the wrong JSON type with its reason: invalid_type,
      // as for the fields read here.
      e.code = status.reason() == core::Reason::kWrongType ? "invalid_type" : "invalid_value";
      break;
    case core::StatusCode::kUnsupported:
      e.http_status = 400;
      e.code = "unsupported_value";
      break;
    case core::StatusCode::kResourceExhausted:
      e.http_status = 503;
      e.type = "server_error";
      e.code = "resource_exhausted";
      break;
    default:
      e.http_status = 500;
      e.type = "server_error";
      e.code = "internal_error";
      e.param.clear();
      break;
  }
  return e;
}

ApiError body_too_large_error(size_t limit_bytes) {
  ApiError e;
  e.http_status = 413;
  e.message = "the request body is larger than the server's limit of " +
              std::to_string(limit_bytes) + " bytes";
  e.code = "request_too_large";
  return e;
}

ApiError queue_full_error() {
  ApiError e;
  e.http_status = 429;
  e.message = "the request queue is full; retry later";
  e.type = "rate_limit_error";
  e.code = "queue_full";
  return e;
}

ApiError shutting_down_error() {
  ApiError e;
  e.http_status = 503;
  e.message = "the server is shutting down";
  e.type = "server_error";
  e.code = "shutting_down";
  return e;
}

ApiError memory_full_error() {
  ApiError e;
  e.http_status = 503;
  e.message = "the prompt's prefill does not fit the memory budget now; retry later";
  e.type = "server_error";
  e.code = "memory_full";
  return e;
}

ApiError cache_busy_error() {
  ApiError e;
  e.http_status = 409;
  e.message = "the engine is busy with a request; retry later";
  e.type = "invalid_request_error";
  e.code = "engine_busy";
  return e;
}

ApiError internal_error(std::string_view what) {
  ApiError e;
  e.http_status = 500;
  e.message = std::string(what);
  e.type = "server_error";
  e.code = "internal_error";
  return e;
}

ApiError not_found_error() {
  ApiError e;
  e.http_status = 404;
  // Neither the path nor the method is echoed: both are client text (a path may carry a
  // prompt or a key in its query) and would land in the client's logs and ours.
  e.message = "no such route: see GET /v1/models, POST /v1/chat/completions, POST /v1/completions";
  e.code = "unknown_url";
  return e;
}

std::string render_error_body(const ApiError& error) {
  Json inner = Json::object();
  inner["message"] = error.message;
  inner["type"] = error.type;
  inner["param"] = error.param.empty() ? Json(nullptr) : Json(error.param);
  inner["code"] = error.code.empty() ? Json(nullptr) : Json(error.code);
  Json body = Json::object();
  body["error"] = std::move(inner);
  return write_json(body);
}

}  // namespace anchorage::server

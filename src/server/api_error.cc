#include "server/api_error.h"

#include <string>

#include "server/json_fields.h"
#include "server/json_writer.h"

namespace anchorage::server {
namespace {

ApiError plain_error(int http_status, std::string message, std::string type, std::string code) {
  ApiError e;
  e.http_status = http_status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.code = std::move(code);
  return e;
}

}  // namespace

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
  return plain_error(413,
                     "the request body is larger than the server's limit of " +
                         std::to_string(limit_bytes) + " bytes",
                     "invalid_request_error", "request_too_large");
}

ApiError queue_full_error() {
  return plain_error(429, "the request queue is full; retry later", "rate_limit_error",
                     "queue_full");
}

ApiError shutting_down_error() {
  return plain_error(503, "the server is shutting down", "server_error", "shutting_down");
}

ApiError memory_full_error() {
  return plain_error(503, "the prompt's prefill does not fit the memory budget now; retry later",
                     "server_error", "memory_full");
}

ApiError cache_busy_error() {
  return plain_error(409, "the engine is busy with a request; retry later", "invalid_request_error",
                     "engine_busy");
}

ApiError internal_error(std::string_view what) {
  return plain_error(500, std::string(what), "server_error", "internal_error");
}

ApiError not_found_error() {
  // Neither the path nor the method is echoed: both are client text (a path may carry a
  // prompt or a key in its query) and would land in the client's logs and ours.
  return plain_error(
      404, "no such route: see GET /v1/models, POST /v1/chat/completions, POST /v1/completions",
      "invalid_request_error", "unknown_url");
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

// POST /v1/chat/completions (routes.h).
#include <httplib.h>

#include "server/request_parser.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"

namespace anchorage::server {

void handle_chat_completions(Service& svc, const httplib::Request& req, httplib::Response& res) {
  CompletionRequest request;
  if (auto e = parse_chat_body(req.body, session_header(req), &request)) {
    return answer_error(svc, res, *e);
  }
  serve_generation(svc, std::move(request), res);
}

// The x-session-id header, if present (header names are case-insensitive in httplib).
std::optional<std::string_view> session_header(const httplib::Request& req) {
  const std::string key(kSessionHeader);
  if (!req.has_header(key.c_str())) return std::nullopt;
  const auto it = req.headers.find(key);
  return std::string_view(it->second);
}

}  // namespace anchorage::server

// POST /v1/chat/completions (routes.h).

#include "server/request_parser.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"

namespace anchorage::server {

void handle_chat_completions(Service& svc, const HttpRequest& req, HttpResponse& res) {
  CompletionRequest request;
  if (auto e = parse_chat_body(req.body, session_header(req), &request)) {
    return answer_error(svc, res, *e);
  }
  request.session.tenant = req.tenant;  // the caches' partition (--cache-scope tenant)
  serve_generation(svc, std::move(request), res);
}

// The x-session-id header, if present (header names compare without case).
std::optional<std::string_view> session_header(const HttpRequest& req) {
  return req.header(kSessionHeader);
}

}  // namespace anchorage::server

// POST /v1/completions (routes.h).

#include "server/request_parser.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"

namespace anchorage::server {

void handle_completions(Service& svc, const HttpRequest& req, HttpResponse& res) {
  CompletionRequest request;
  if (auto e = parse_completion_body(req.body, session_header(req), &request)) {
    return answer_error(svc, res, *e);
  }
  request.session.tenant = req.tenant;  // the caches' partition (--cache-scope tenant)
  serve_generation(svc, std::move(request), res);
}

}  // namespace anchorage::server

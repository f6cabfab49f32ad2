// The route handlers (docs/http-api.md): each parses, validates, submits and renders, and
// leaves the mechanics to request_parser.h, prompt_builder.h, engine_queue.h and
// responder.h. HttpServer installs them.
//
// Thread safety: handlers run on HTTP threads, many at once; they share only the Service.
#pragma once

#include <optional>
#include <string_view>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace anchorage::server {

struct CompletionRequest;
struct Service;

void handle_chat_completions(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_completions(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_models(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_model(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_health(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_metrics(Service& svc, const httplib::Request& req, httplib::Response& res);
// The cache routes (docs/http-api.md "Cache routes", cache_routes.cc).
void handle_cache_stats(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_cache_clear(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_cache_peek(Service& svc, const httplib::Request& req, httplib::Response& res);
// llama-server's routes in its shapes (llama_routes.cc): POST /tokenize, POST /detokenize,
// GET /props.
void handle_tokenize(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_detokenize(Service& svc, const httplib::Request& req, httplib::Response& res);
void handle_props(Service& svc, const httplib::Request& req, httplib::Response& res);

// True when the request carries `Authorization: Bearer <key>`; compared in time that does not
// depend on where a wrong key first differs.
bool bearer_matches(const httplib::Request& req, std::string_view key);

// The x-session-id header's value, if the request has one.
std::optional<std::string_view> session_header(const httplib::Request& req);

// What both completion routes do once the body is parsed: build and measure the prompt,
// submit the job (429 when the queue is full, 503 when shutting down), answer it.
void serve_generation(Service& svc, CompletionRequest request, httplib::Response& res);

}  // namespace anchorage::server

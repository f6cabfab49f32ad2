// The route handlers (docs/http-api.md) and the one table of routes: each handler parses,
// validates, submits and renders, and leaves the mechanics to request_parser.h,
// prompt_builder.h, engine_queue.h and responder.h. HttpServer dispatches through the table,
// `serve --help` lists it, and the metrics label a request with its route's pattern.
//
// Thread safety: handlers run on HTTP worker threads, many at once; they share only the
// Service. The table is constant.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/http_message.h"

namespace anchorage::server {

struct CompletionRequest;
struct Service;

using RouteHandler = void (*)(Service& svc, const HttpRequest& req, HttpResponse& res);

struct Route {
  std::string_view method;   // "GET" or "POST"
  std::string_view pattern;  // "{id}" matches one path segment; also the metrics label
  RouteHandler handler;
  std::string_view help;  // what `serve --help` says of it
};

// Every route the server answers, in `serve --help`'s order.
std::span<const Route> route_table();
// The route for method and path (the path without its query), with {id}'s value in *param;
// nullptr when none.
const Route* find_route(std::string_view method, std::string_view path, std::string* param);
// The metrics label of a path: the pattern of a route with this path (whatever the method),
// or "other" — never the client's path itself.
std::string_view route_label(std::string_view path);

void handle_chat_completions(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_completions(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_models(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_model(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_health(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_metrics(Service& svc, const HttpRequest& req, HttpResponse& res);
// The cache routes (docs/http-api.md "Cache routes", cache_routes.cc).
void handle_cache_stats(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_cache_clear(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_cache_peek(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_cache_prewarm(Service& svc, const HttpRequest& req, HttpResponse& res);
// llama-server's routes in its shapes (llama_routes.cc): POST /tokenize, POST /detokenize,
// GET /props.
void handle_tokenize(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_detokenize(Service& svc, const HttpRequest& req, HttpResponse& res);
void handle_props(Service& svc, const HttpRequest& req, HttpResponse& res);

// Whether the request may see the caches' server-wide figures (/v1/cache/stats, the cache part
// of /health and /metrics): always under --cache-scope global; under tenant scope only with
// the admin token, since they count and size every tenant's states.
bool sees_all_tenants(const Service& svc, const HttpRequest& req);

// The x-session-id header's value, if the request has one.
std::optional<std::string_view> session_header(const HttpRequest& req);

// What both completion routes do once the body is parsed: build and measure the prompt,
// submit the job (429 when the queue is full, 503 when shutting down), answer it.
void serve_generation(Service& svc, CompletionRequest request, HttpResponse& res);

}  // namespace anchorage::server

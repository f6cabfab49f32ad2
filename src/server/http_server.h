// HttpServer: the OpenAI-compatible HTTP server (docs/http-api.md) — the transport
// (http_transport.h: Boost.Beast on one Asio I/O thread, handlers on a worker pool) wired to
// the route table (routes.h), one EngineQueue over the served model's engine, the metrics.
//
// Life cycle: bind() (port 0 picks a free port), serve() blocks on the calling thread until
// shutdown() has finished. shutdown() (SIGTERM; any thread, idempotent): /health turns 503,
// waiting requests get 503, new ones 503 too, the request on the engine finishes and its
// response is written (cut after --drain-s), then the drain hook runs (the caches will save
// their state there) and the listener closes.
//
// Thread safety: bind and serve from one thread; shutdown from any; test_ accessors from any.
#pragma once

#include <functional>
#include <memory>

#include "core/status.h"
#include "server/server_options.h"

namespace anchorage::server {

class EngineQueue;
class Metrics;
struct ServedModel;

class HttpServer {
 public:
  // model must outlive the server.
  HttpServer(const ServerOptions& options, ServedModel& model);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Opens the listening socket. IOError when the address cannot be bound.
  core::Status bind();
  int port() const;
  // Accepts and answers requests until shutdown() completes.
  core::Status serve();
  void shutdown();

  // Runs during shutdown(), after the last response and before the listener closes, with
  // the engine thread stopped: the seam where the caches will drain (session spill).
  void set_drain_hook(std::function<void()> hook);

  EngineQueue& test_queue();
  Metrics& test_metrics();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anchorage::server

#include "server/http_server.h"

#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <algorithm>
#include <cerrno>
#include <cstring>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "server/api_error.h"
#include "server/disk_tier_setup.h"
#include "server/engine_queue.h"
#include "server/metrics.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/served_model.h"
#include "server/service.h"

namespace anchorage::server {
namespace {

// The route a request matched, for metrics labels (never the client's path itself).
std::string route_label(const httplib::Request& req) {
  static constexpr const char* kRoutes[] = {"/v1/chat/completions",
                                            "/v1/completions",
                                            "/v1/models",
                                            "/health",
                                            "/metrics",
                                            "/v1/cache/stats",
                                            "/v1/cache/clear",
                                            "/v1/cache/peek",
                                            "/tokenize",
                                            "/detokenize",
                                            "/props"};
  for (const char* r : kRoutes) {
    if (req.path == r) return r;
  }
  if (req.path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

}  // namespace

struct HttpServer::Impl {
  Impl(const ServerOptions& o, ServedModel& m)
      : options(o),
        model(m),
        caches(o.cache.enabled ? std::make_unique<EngineCaches>(o.cache, *m.engine, *m.tokenizer)
                               : nullptr),
        queue(*m.engine, o.queue_capacity, &metrics, caches.get()),
        service(options, *m.tokenizer, queue, metrics, responses) {
    service.capacity = m.engine->capacity();
    service.vocab_size = m.vocab_size;
    service.stop_ids = m.stop_ids;
    service.constraint_vocab = make_constraint_vocab(*m.tokenizer);
    service.caches = caches.get();
    if (caches && !o.cache.disk_root.empty()) {
      auto disk = open_disk_tier(disk_fs.fs(), o.cache, m);
      if (disk) {
        caches->attach_disk_tier(std::move(*disk));
      } else {
        // The server runs on without it: every answer is the same, only slower to come.
        core::log(core::LogLevel::kWarn, "disk tier off: %s", disk.error().to_string().c_str());
      }
    }
    service.created = int64_t(std::time(nullptr));
    service.nonce_base = uint64_t(core::now_ns()) ^ (uint64_t(std::random_device{}()) << 32);
    if (!o.journal.path.empty()) {
      auto j = RequestJournal::open(o.journal);
      if (j) {
        journal = std::move(*j);
        queue.set_journal(journal.get());
      } else {
        journal_error = j.error();
      }
    }
  }

  void install();

  const ServerOptions options;
  ServedModel& model;
  Metrics metrics;
  ResponseTracker responses;
  DiskFs disk_fs;                           // the disk tier's files (outlives the caches)
  std::unique_ptr<EngineCaches> caches;     // null with --no-cache
  std::unique_ptr<RequestJournal> journal;  // null without --journal (outlives the queue)
  core::Status journal_error;               // bind() reports it
  EngineQueue queue;
  Service service;
  httplib::Server http;
  std::function<void()> drain_hook;
  int bound_port = 0;
  int listen_fd = -1;  // the listening socket, kept to raise httplib's fixed backlog
  std::once_flag shutdown_once;
  // serve() and shutdown() meet here: httplib's stop() does nothing before its listen loop
  // runs, so a shutdown that races a starting serve() waits for the loop.
  std::mutex serve_mu;
  bool serve_entered = false;
  bool stopped = false;
  std::atomic<bool> serve_returned{false};
};

void HttpServer::Impl::install() {
  Service& svc = service;
  const int threads =
      options.http_threads > 0 ? options.http_threads : int(options.queue_capacity) + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  http.set_payload_max_length(options.max_body_bytes);
  // httplib's default options set SO_REUSEPORT, so a second server on the same port binds too
  // and the kernel splits connections between the two (mixing caches and even models). Only
  // SO_REUSEADDR (a restart may rebind over TIME_WAIT connections); a second bind then fails.
  http.set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = sock;  // httplib tries addresses in turn: the last one tried is the one bound
  });
  // Each request is counted when its handler returns, before httplib writes the response, so
  // a client that reads /metrics right after its own response sees it counted.
  using RouteFn = void (*)(Service&, const httplib::Request&, httplib::Response&);
  auto route = [&svc](const char* label, RouteFn fn) {
    return [&svc, label, fn](const httplib::Request& q, httplib::Response& r) {
      fn(svc, q, r);
      svc.metrics.count_request(label, r.status == -1 ? 200 : r.status);  // -1: httplib's 200
    };
  };
  // Before httplib reads a body (pre-routing runs first): a Content-Length that is not a
  // non-negative integer gets an immediate 400 (httplib would read toward a huge length and
  // answer 413 after its read timeout), and a POST that gives no length at all (curl -X POST
  // without -d) has, per HTTP/1.1, an empty body, which httplib refuses: run its route here
  // with the empty body instead.
  struct PostRoute {
    const char* path;
    RouteFn fn;
  };
  static constexpr PostRoute kBodylessPosts[] = {
      {"/v1/chat/completions", handle_chat_completions},
      {"/v1/completions", handle_completions},
      {"/v1/cache/clear", handle_cache_clear},
      {"/v1/cache/peek", handle_cache_peek},
      {"/tokenize", handle_tokenize},
      {"/detokenize", handle_detokenize},
  };
  http.set_pre_routing_handler([&svc, route](const httplib::Request& q, httplib::Response& r) {
    using httplib::Server;
    // --api-key: checked before anything else reads the request, on every route but /health
    // (load balancers probe it without keys).
    // The admin token passes too: one Authorization header cannot carry both, and the cache
    // routes it guards sit behind this check.
    const ServerOptions& o = svc.options;
    if (!o.api_key.empty() && q.path != "/health" && !bearer_matches(q, o.api_key) &&
        (o.admin_token.empty() || !bearer_matches(q, o.admin_token))) {
      svc.metrics.count_request(route_label(q), 401);
      ApiError e = field_error("Authorization",
                               "this server needs an API key: send "
                               "Authorization: Bearer <key>",
                               "invalid_api_key");
      e.http_status = 401;
      e.type = "authentication_error";
      answer_error(svc, r, e);
      return Server::HandlerResponse::Handled;
    }
    if (q.has_header("Content-Length")) {
      const std::string v = q.get_header_value("Content-Length");
      const bool digits =
          !v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string::npos;
      if (digits) return Server::HandlerResponse::Unhandled;
      svc.metrics.count_request(route_label(q), 400);
      r.set_header("Connection", "close");  // the body's end is unknown: no next request
      ApiError e = field_error("Content-Length", "must be a non-negative integer");
      answer_error(svc, r, e);
      return Server::HandlerResponse::Handled;
    }
    if (q.method != "POST" || q.has_header("Transfer-Encoding")) {
      return Server::HandlerResponse::Unhandled;
    }
    for (const PostRoute& p : kBodylessPosts) {
      if (q.path == p.path) {
        route(p.path, p.fn)(q, r);
        return Server::HandlerResponse::Handled;
      }
    }
    return Server::HandlerResponse::Unhandled;
  });
  http.Post("/v1/chat/completions", route("/v1/chat/completions", handle_chat_completions));
  http.Post("/v1/completions", route("/v1/completions", handle_completions));
  http.Get("/v1/models", route("/v1/models", handle_models));
  http.Get(R"(/v1/models/([^/]+))", route("/v1/models/{id}", handle_model));
  http.Get("/health", route("/health", handle_health));
  http.Get("/metrics", route("/metrics", handle_metrics));
  http.Get("/v1/cache/stats", route("/v1/cache/stats", handle_cache_stats));
  http.Post("/v1/cache/clear", route("/v1/cache/clear", handle_cache_clear));
  http.Post("/v1/cache/peek", route("/v1/cache/peek", handle_cache_peek));
  http.Post("/tokenize", route("/tokenize", handle_tokenize));
  http.Post("/detokenize", route("/detokenize", handle_detokenize));
  http.Get("/props", route("/props", handle_props));

  // Errors httplib itself produces (no route, 413 body too large, a malformed request line)
  // get the OpenAI error shape too; our handlers' errors already have a body.
  http.set_error_handler([&svc](const httplib::Request& q, httplib::Response& r) {
    if (!r.body.empty()) return;  // one of ours, counted by its route
    svc.metrics.count_request(route_label(q), r.status);
    if (r.status == 413) {
      // httplib caps form-encoded bodies (curl -d without a Content-Type) at 8 KiB whatever
      // our limit says; say so instead of quoting a limit the body did not reach.
      ApiError e = body_too_large_error(svc.options.max_body_bytes);
      if (q.get_header_value("Content-Type") == "application/x-www-form-urlencoded") {
        e.message =
            "form-encoded bodies are limited to 8192 bytes: send Content-Type: "
            "application/json";
      }
      return answer_error(svc, r, e);
    }
    if (r.status == 404) return answer_error(svc, r, not_found_error());
    ApiError e = field_error("", "malformed HTTP request", "bad_request");
    if (r.status == 400 && q.method == "POST" && !q.has_header("Content-Length") &&
        !q.has_header("Transfer-Encoding")) {
      // httplib refuses a POST that says nothing of its body's length (curl -X POST without
      // -d sends none).
      e = field_error("Content-Length", "a POST needs a Content-Length (0 for no body)");
    }
    e.http_status = r.status;
    answer_error(svc, r, e);
  });
  http.set_exception_handler(
      [&svc](const httplib::Request&, httplib::Response& r, std::exception_ptr) {
        answer_error(svc, r, internal_error("internal error"));
      });
}

HttpServer::HttpServer(const ServerOptions& options, ServedModel& model)
    : impl_(std::make_unique<Impl>(options, model)) {
  impl_->install();
}

HttpServer::~HttpServer() {
  shutdown();
}

core::Status HttpServer::bind() {
  // A client that goes away mid-stream makes the next write raise SIGPIPE, whose default
  // action kills the process; httplib sends without MSG_NOSIGNAL, so ignore it process-wide
  // and let the write fail (which cancels the generation).
  ::signal(SIGPIPE, SIG_IGN);
  if (!impl_->journal_error.is_ok()) return impl_->journal_error;
  const ServerOptions& o = impl_->options;
  errno = 0;
  if (o.port == 0) {
    impl_->bound_port = impl_->http.bind_to_any_port(o.host);
  } else if (impl_->http.bind_to_port(o.host, o.port)) {
    impl_->bound_port = o.port;
  }
  if (impl_->bound_port <= 0) {
    const int err = errno;
    std::string why = err == EADDRINUSE ? ": the port is in use (another server is on it?)"
                      : err != 0        ? std::string(": ") + std::strerror(err)
                                        : "";
    return core::Status::io_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                  why);
  }
  // httplib listens with a fixed backlog of 5, below the queue capacity: a burst of clients the
  // queue would take is refused by the kernel first. listen() again on a listening socket only
  // resizes its backlog (Linux).
  const int backlog = std::max(SOMAXCONN, int(o.queue_capacity) + 16);
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, backlog);
  return core::Status::ok();
}

int HttpServer::port() const {
  return impl_->bound_port;
}

core::Status HttpServer::serve() {
  {
    std::lock_guard<std::mutex> lock(impl_->serve_mu);
    if (impl_->stopped) return core::Status::ok();
    impl_->serve_entered = true;
  }
  const bool ok = impl_->http.listen_after_bind();
  impl_->serve_returned = true;
  if (!ok && !impl_->stopped) return core::Status::io_error("the HTTP listener failed");
  return core::Status::ok();
}

void HttpServer::shutdown() {
  Impl& s = *impl_;
  std::call_once(s.shutdown_once, [&s] {
    ANCHORAGE_LOG_INFO("shutdown: %zu waiting request(s) refused; %s", s.queue.depth(),
                       s.queue.running() ? "finishing the running one" : "the engine is idle");
    s.service.shutting_down = true;
    s.queue.close();
    // The running generation may finish until the drain deadline; then it is cut and its
    // client gets a shutting_down error, so SIGTERM is bounded.
    std::mutex drain_mu;
    std::condition_variable drain_cv;
    bool drained = false;
    std::thread cutter;
    if (s.options.drain_s > 0) {
      cutter = std::thread([&] {
        std::unique_lock<std::mutex> lock(drain_mu);
        if (!drain_cv.wait_for(lock, std::chrono::seconds(s.options.drain_s),
                               [&] { return drained; })) {
          ANCHORAGE_LOG_INFO("shutdown: drain deadline (%d s) passed: cutting the running request",
                             s.options.drain_s);
          s.queue.cut_running();
        }
      });
    }
    s.responses.wait_idle();
    {
      std::lock_guard<std::mutex> lock(drain_mu);
      drained = true;
    }
    drain_cv.notify_all();
    if (cutter.joinable()) cutter.join();
    s.queue.join();
    // The engine is idle for good: the conversation in place goes to the session spill.
    if (s.caches) s.caches->drain();
    if (s.drain_hook) s.drain_hook();
    bool entered = false;
    {
      std::lock_guard<std::mutex> lock(s.serve_mu);
      s.stopped = true;
      entered = s.serve_entered;
    }
    if (entered) {
      while (!s.http.is_running() && !s.serve_returned) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      s.http.stop();
    }
  });
}

void HttpServer::set_drain_hook(std::function<void()> hook) {
  impl_->drain_hook = std::move(hook);
}

EngineQueue& HttpServer::test_queue() {
  return impl_->queue;
}
Metrics& HttpServer::test_metrics() {
  return impl_->metrics;
}

}  // namespace anchorage::server

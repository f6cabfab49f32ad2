#include "server/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/disk_tier_setup.h"
#include "server/engine_queue.h"
#include "server/http_transport.h"
#include "server/metrics.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/served_model.h"
#include "server/service.h"
#include "server/suffix_store_setup.h"

namespace anchorage::server {

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
    if (caches && o.suffix_store && !o.cache.disk_root.empty()) {
      auto opened = open_suffix_store(disk_fs.fs(), o.cache.disk_root, *m.tokenizer, o.suffix);
      if (opened) {
        suffix = std::move(*opened);
        const cache::SuffixStoreStats st = suffix.store->stats();
        core::log(core::LogLevel::kInfo,
                  "suffix store: %s/suffix, %llu tokens in %lld documents%s, %lld torn tails "
                  "dropped, %lld corrupt logs deleted",
                  o.cache.disk_root.c_str(), (unsigned long long)st.tokens, (long long)st.documents,
                  o.suffix.read_only ? " (read-only)" : "", (long long)st.torn_tails,
                  (long long)st.corrupt_deleted);
        queue.set_suffix_store(suffix.store.get());
        service.suffix_store = suffix.store.get();
      } else {
        // Drafts are hints: the server runs on without them.
        core::log(core::LogLevel::kWarn, "suffix store off: %s",
                  opened.error().to_string().c_str());
      }
    }
    if (o.draft_lookup) queue.set_drafting(o.draft);
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

  TransportOptions transport_options() const;
  // The transport's callbacks: a whole request on a worker; a refused one on the I/O thread.
  void handle(HttpRequest& q, HttpResponse& r);
  void refuse(TransportFault fault, const HttpRequest& q, HttpResponse& r);

  const ServerOptions options;
  ServedModel& model;
  Metrics metrics;
  ResponseTracker responses;
  DiskFs disk_fs;                           // the disk tier's files (outlives the caches)
  std::unique_ptr<EngineCaches> caches;     // null with --no-cache
  std::unique_ptr<RequestJournal> journal;  // null without --journal (outlives the queue)
  OpenSuffixStore suffix;                   // no store when off (outlives the queue)
  core::Status journal_error;               // bind() reports it
  EngineQueue queue;
  Service service;
  std::function<void()> drain_hook;
  std::once_flag shutdown_once;
  // Last: its worker threads call handle(), which reads everything above.
  HttpTransport transport{
      transport_options(),
      {[this](HttpRequest& q, HttpResponse& r) { handle(q, r); },
       [this](TransportFault f, const HttpRequest& q, HttpResponse& r) { refuse(f, q, r); }}};
};

TransportOptions HttpServer::Impl::transport_options() const {
  TransportOptions t;
  t.host = options.host;
  t.port = options.port;
  // At least the queue capacity and some: a burst of clients the queue would take is not
  // refused by the kernel first.
  t.backlog = std::max(SOMAXCONN, int(options.queue_capacity) + 16);
  t.header_timeout_s = options.header_timeout_s;
  t.idle_timeout_s = options.idle_timeout_s;
  t.max_body_bytes = options.max_body_bytes;
  t.worker_threads =
      options.http_threads > 0 ? options.http_threads : int(options.queue_capacity) + 8;
  return t;
}

void HttpServer::Impl::handle(HttpRequest& q, HttpResponse& r) {
  const std::string_view label = route_label(q.path);
  // --api-key: checked before anything else reads the request, on every route but /health
  // (load balancers probe it without keys). The admin token passes too: one Authorization
  // header cannot carry both, and the cache routes it guards sit behind this check.
  std::optional<std::string> tenant;
  if (!options.api_keys.empty() || !options.admin_token.empty())
    tenant = authenticate(bearer_token(q), options.api_keys, options.admin_token);
  if (!options.api_keys.empty() && q.path != "/health" && !tenant) {
    ApiError e = field_error("Authorization",
                             "this server needs an API key: send Authorization: Bearer <key>",
                             "invalid_api_key");
    e.http_status = 401;
    e.type = "authentication_error";
    answer_error(service, r, e);
  } else if (const Route* route = find_route(q.method, q.path, &q.path_param)) {
    if (tenant) q.tenant = std::move(*tenant);
    try {
      route->handler(service, q, r);
    } catch (const std::exception&) {  // a bug (our code throws nothing): the server goes on
      r = HttpResponse{};
      answer_error(service, r, internal_error("internal error"));
    }
  } else {
    answer_error(service, r, not_found_error());
  }
  // Counted before the response is written, so a client that reads /metrics right after its
  // own response sees it counted.
  metrics.count_request(std::string(label), r.status);
}

void HttpServer::Impl::refuse(TransportFault fault, const HttpRequest& q, HttpResponse& r) {
  ApiError e;
  switch (fault) {
    case TransportFault::kMalformed:
      e = field_error("", "malformed HTTP request", "bad_request");
      break;
    case TransportFault::kBadContentLength:
      e = field_error("Content-Length", "must be a non-negative integer");
      break;
    case TransportFault::kHeadersTooLarge:
      e = field_error("", "the request's headers are too large", "request_header_too_large");
      e.http_status = 431;
      break;
    case TransportFault::kBodyTooLarge:
      e = body_too_large_error(options.max_body_bytes);
      break;
    case TransportFault::kTimeout:
      e = field_error(
          "",
          "the request did not arrive within " + std::to_string(options.header_timeout_s) + " s",
          "request_timeout");
      e.http_status = 408;
      break;
  }
  metrics.count_request(std::string(route_label(q.path)), e.http_status);
  answer_error(service, r, e);
}

HttpServer::HttpServer(const ServerOptions& options, ServedModel& model)
    : impl_(std::make_unique<Impl>(options, model)) {}

HttpServer::~HttpServer() {
  shutdown();
}

core::Status HttpServer::bind() {
  if (!impl_->journal_error.is_ok()) return impl_->journal_error;
  core::Status s = impl_->transport.bind();
  if (s.is_ok()) impl_->model.engine->start_fault_in();
  return s;
}

int HttpServer::port() const {
  return impl_->transport.port();
}

core::Status HttpServer::serve() {
  impl_->transport.run();
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
    s.transport.stop();
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

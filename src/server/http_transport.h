// HttpTransport: HTTP/1.1 over TCP for the server (docs/http-api.md "Connections") — one
// Boost.Asio I/O thread does every socket read and write asynchronously, Boost.Beast's parser
// reads the requests, and a pool of worker threads runs the handlers.
//
// Why an event loop: a handler may block for minutes (it waits for the engine and streams the
// answer), so handlers need threads; but a connection that is idle between keep-alive requests
// or whose headers trickle in must not hold one. Here such a connection costs a socket, a
// timer and a small buffer on the I/O thread; a worker is taken only once a whole request is
// in, and given back when its response is written.
//
// Deadlines, each a timer on the I/O thread: a request's headers must be complete within
// header_timeout_s of its first byte (then 408 and close), its body may not pause longer than
// that either; a connection idle between requests is closed after idle_timeout_s; a write the
// client does not take within kWriteTimeoutS closes the connection (which fails the handler's
// next write: a stream's generation stops).
//
// Life cycle: bind() opens the listening socket (SO_REUSEADDR, never SO_REUSEPORT: a second
// server on the port must fail); run() serves on the calling thread until stop(); stop() (any
// other thread, idempotent) closes the listener and every connection that is not answering a
// request, lets the answers in progress finish, then makes run() return.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "server/http_message.h"

namespace anchorage::server {

struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port
  int backlog = 128;
  int header_timeout_s = 10;
  int idle_timeout_s = 60;
  size_t max_body_bytes = size_t(16) << 20;
  size_t max_header_bytes = size_t(64) << 10;
  int worker_threads = 16;
};

// Why the transport refused a request before any handler saw it.
enum class TransportFault {
  kMalformed,         // not HTTP/1.x (400)
  kBadContentLength,  // a Content-Length that is not a non-negative integer (400)
  kHeadersTooLarge,   // headers over max_header_bytes (431)
  kBodyTooLarge,      // body over max_body_bytes (413)
  kTimeout,           // headers (or a pause in the body) past the deadline (408)
};

struct TransportCallbacks {
  // On a worker thread once the whole request is in: fill the response. May block.
  std::function<void(HttpRequest& request, HttpResponse& response)> handle;
  // On the I/O thread, must not block: the response to a refused request; `request` holds
  // what was parsed of it (method and path may be empty). The connection closes after it.
  std::function<void(TransportFault fault, const HttpRequest& request, HttpResponse& response)>
      refuse;
};

class HttpTransport {
 public:
  static constexpr int kWriteTimeoutS = 60;

  HttpTransport(TransportOptions options, TransportCallbacks callbacks);
  friend class HttpConnection;  // a connection reaches the I/O context, pool and options
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // IOError naming the address when it cannot be bound ("the port is in use" for EADDRINUSE).
  core::Status bind();
  int port() const;
  // Serves until stop(); returns at once if stop() came first.
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anchorage::server

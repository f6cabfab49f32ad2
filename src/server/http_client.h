// HttpClient: a small blocking HTTP/1.1 client over loopback, for the tests, the benchmarks
// and tools that talk to `anchorage serve`. One connection per request (Connection: close);
// responses are parsed by Boost.Beast's parser, the same library as the server's transport,
// so the project has one HTTP stack. A streamed body can be taken piece by piece, and the
// receiver can hang up (what a client that aborts a stream does).
//
// Thread safety: a client holds only its settings; use one per thread, or share a const one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_message.h"

namespace anchorage::server {

struct HttpClientResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;  // empty when a receiver took it
  // The header's value ("" when absent); names compare without case.
  std::string get_header_value(std::string_view name) const;
};

// A response, or why there is none ("connect", "timeout", "closed", "cancelled", ...).
class HttpResult {
 public:
  HttpResult(HttpClientResponse r) : response_(std::move(r)) {}  // NOLINT: implicit by design
  static HttpResult failed(std::string why) {
    HttpResult r;
    r.error_ = std::move(why);
    return r;
  }
  explicit operator bool() const { return response_.has_value(); }
  const HttpClientResponse* operator->() const { return &*response_; }
  const HttpClientResponse& operator*() const { return *response_; }
  const std::string& error() const { return error_; }

 private:
  HttpResult() = default;
  std::optional<HttpClientResponse> response_;
  std::string error_;
};

class HttpClient {
 public:
  // Each piece of the body as it comes; false hangs up (the result is then "cancelled").
  using Receiver = std::function<bool(std::string_view piece)>;

  HttpClient(std::string host, int port) : host_(std::move(host)), port_(port) {}
  // The longest wait for the server's next bytes (default 120 s).
  void set_read_timeout(int seconds) { read_timeout_s_ = seconds; }

  HttpResult Get(const std::string& path, const HttpHeaders& headers = {}) const;
  HttpResult Post(const std::string& path) const { return Post(path, {}, "", ""); }
  HttpResult Post(const std::string& path, const std::string& body,
                  const std::string& content_type) const {
    return Post(path, {}, body, content_type);
  }
  HttpResult Post(const std::string& path, const HttpHeaders& headers, const std::string& body,
                  const std::string& content_type) const;
  // Any request; with a receiver the body goes to it instead of the response.
  HttpResult send(const std::string& method, const std::string& path, const HttpHeaders& headers,
                  const std::string& body, const Receiver& receiver = nullptr) const;

 private:
  std::string host_;
  int port_ = 0;
  int read_timeout_s_ = 120;
};

}  // namespace anchorage::server

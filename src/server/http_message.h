// HttpRequest and HttpResponse: what a route handler reads and writes, our own types so that
// the routes never see the HTTP library (http_transport.h owns Boost.Beast; routes.h and the
// route files include only this header).
//
// A response is either whole (status, headers, body) or chunked: set_chunked() installs a
// provider the transport calls again and again on a worker thread, each call writing through
// a ChunkSink, until the provider calls sink.done() (the body is complete) or returns false
// (give up: the connection is closed). on_complete(ok) runs once afterwards in every case, so
// a provider's owner can release what it holds (the response tracker, a job to cancel).
//
// Thread safety: plain values; one request and its response belong to one worker at a time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anchorage::server {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target without its query
  std::string query;   // after '?', undecoded; "" when none
  HttpHeaders headers;
  std::string body;
  // The value a pattern's {id} matched (GET /v1/models/{id}); "" for other routes.
  std::string path_param;
  // The tenant the request's bearer key authenticates as (api_keys.h), set before any handler
  // runs; "" when the server has no keys.
  std::string tenant;

  // Header names compare without case (RFC 9110 §5.1); the first header of that name.
  std::optional<std::string_view> header(std::string_view name) const;
  bool has_header(std::string_view name) const { return header(name).has_value(); }
  // The header's value, "" when absent.
  std::string header_value(std::string_view name) const;
  // The query parameter's value, percent-decoded ('+' is a space, as forms send it).
  std::optional<std::string> query_param(std::string_view name) const;
};

// Where a chunked body goes. write() is false once the client is gone (or the server stops):
// the provider should then give up.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual bool write(std::string_view data) = 0;
  // The body is complete: the provider is not called again.
  virtual void done() = 0;
};

struct HttpResponse {
  using ChunkProvider = std::function<bool(ChunkSink&)>;
  using Completion = std::function<void(bool ok)>;

  int status = 200;
  HttpHeaders headers;  // Content-Type, Content-Length and Connection are the transport's
  std::string content_type;
  std::string body;
  ChunkProvider chunk_provider;  // set: a chunked body, `body` unused
  Completion on_complete;

  void set_header(std::string name, std::string value);
  void set_content(std::string body_text, std::string_view type);
  void set_chunked(std::string_view type, ChunkProvider provider, Completion done);
  std::optional<std::string_view> header(std::string_view name) const;
};

// Case-insensitive ASCII equality (header names, Connection tokens).
bool iequals(std::string_view a, std::string_view b);

}  // namespace anchorage::server

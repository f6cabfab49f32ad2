#include "server/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace anchorage::server {
namespace {

namespace http = boost::beast::http;

// A connected socket, closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += size_t(n);
  }
  return true;
}

}  // namespace

std::string HttpClientResponse::get_header_value(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

HttpResult HttpClient::Get(const std::string& path, const HttpHeaders& headers) const {
  return send("GET", path, headers, "");
}

HttpResult HttpClient::Post(const std::string& path, const HttpHeaders& headers,
                            const std::string& body, const std::string& content_type) const {
  HttpHeaders all = headers;
  if (!content_type.empty()) all.emplace_back("Content-Type", content_type);
  return send("POST", path, all, body);
}

HttpResult HttpClient::send(const std::string& method, const std::string& path,
                            const HttpHeaders& headers, const std::string& body,
                            const Receiver& receiver) const {
  Socket socket(connect_to(host_, port_));
  if (socket.fd() < 0) return HttpResult::failed("connect");
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + host_ + ":" +
                        std::to_string(port_) + "\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) request += k + ": " + v + "\r\n";
  if (method == "POST" || !body.empty()) {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  if (!send_all(socket.fd(), request)) return HttpResult::failed("send");

  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // the caller asked for this body, whatever its size
  boost::beast::flat_buffer buffer;
  size_t taken = 0;  // body bytes already handed to the receiver
  bool eof = false;
  while (!parser.is_done()) {
    if (eof) {
      // A body without a length ends with the connection.
      boost::system::error_code ec;
      parser.put_eof(ec);
      if (ec || !parser.is_done()) return HttpResult::failed("closed");
      break;
    }
    pollfd p{socket.fd(), POLLIN, 0};
    const int ready = ::poll(&p, 1, read_timeout_s_ * 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return HttpResult::failed("timeout");
    auto space = buffer.prepare(16 << 10);
    const ssize_t n = ::recv(socket.fd(), space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return HttpResult::failed("recv");
    if (n == 0) {
      eof = true;
      continue;
    }
    buffer.commit(size_t(n));
    while (buffer.size() > 0 && !parser.is_done()) {
      boost::system::error_code ec;
      const size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more) break;
      if (ec) return HttpResult::failed("malformed response");
      if (used == 0) break;
    }
    if (receiver && parser.is_header_done()) {
      std::string& got = parser.get().body();
      if (got.size() > taken) {
        const bool more = receiver(std::string_view(got).substr(taken));
        taken = got.size();
        if (!more) return HttpResult::failed("cancelled");
      }
    }
  }
  const auto& m = parser.get();
  HttpClientResponse out;
  out.status = int(m.result_int());
  for (const auto& field : m) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  if (receiver) {
    const std::string& got = m.body();
    if (got.size() > taken && !receiver(std::string_view(got).substr(taken))) {
      return HttpResult::failed("cancelled");
    }
  } else {
    out.body = m.body();
  }
  return out;
}

}  // namespace anchorage::server

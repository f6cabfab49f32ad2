#include "server/http_transport.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

namespace anchorage::server {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

// Bytes asked of the socket per read: a whole typical request, without letting a slow
// connection pin a large buffer.
constexpr size_t kReadChunk = 16 << 10;
// After the last response of a connection the server stops sending and reads what the client
// still sends (a body it will not read, a pipelined request) for this long before closing:
// closing a socket with unread input sends a reset, which can destroy the response in flight.
constexpr auto kLingerTime = std::chrono::seconds(1);

// The handlers' threads: a fixed pool and a queue of tasks. A helper thread starts them, so a
// server's start-up does not wait for 16 thread creations (2-10 ms of a cold start: stacks
// mapped while the engine's background work holds the mmap lock); a task posted before they
// run waits in the queue.
class WorkerPool {
 public:
  explicit WorkerPool(int threads)
      : starter_([this, threads] {
          for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
        }) {}
  ~WorkerPool() { join(); }

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }
  // No task queued or running.
  bool idle() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tasks_.empty() && running_ == 0;
  }
  // Runs what is queued, then ends the threads (idempotent).
  void join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    // threads_ is complete once the starter has returned (a thread it starts after closing_
    // runs what is queued and ends, as the others).
    if (starter_.joinable()) starter_.join();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void loop() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return closing_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        ++running_;
      }
      task();
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  size_t running_ = 0;
  bool closing_ = false;
  std::vector<std::thread> threads_;  // written by starter_ only, read after it has joined
  std::thread starter_;               // last: it uses the members above
};

// "HTTP/1.1 200 OK\r\n" + headers + "\r\n"; Content-Length or chunked framing is the caller's.
std::string response_head(const HttpResponse& res, bool keep_alive, int idle_timeout_s) {
  const auto reason = http::obsolete_reason(http::int_to_status(unsigned(res.status)));
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + std::string(reason) + "\r\n";
  if (!res.content_type.empty()) out += "Content-Type: " + res.content_type + "\r\n";
  for (const auto& [k, v] : res.headers) {
    if (iequals(k, "Connection") || iequals(k, "Content-Length") ||
        iequals(k, "Transfer-Encoding") || iequals(k, "Content-Type"))
      continue;  // the transport's own
    out += k + ": " + v + "\r\n";
  }
  if (keep_alive) {
    // Tells pooling clients when an idle connection will be closed, so they drop it first.
    out +=
        "Connection: keep-alive\r\nKeep-Alive: timeout=" + std::to_string(idle_timeout_s) + "\r\n";
  } else {
    out += "Connection: close\r\n";
  }
  return out;
}

std::string whole_response(const HttpResponse& res, bool keep_alive, int idle_timeout_s) {
  std::string out = response_head(res, keep_alive, idle_timeout_s);
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n\r\n";
  out += res.body;
  return out;
}

std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string out = size;
  out.append(data);
  out += "\r\n";
  return out;
}

}  // namespace

class HttpConnection;

struct HttpTransport::Impl {
  Impl(TransportOptions o, TransportCallbacks c)
      : options(std::move(o)),
        callbacks(std::move(c)),
        acceptor(io),
        accept_retry(io),
        pool(options.worker_threads) {}

  void accept();
  void begin_stop();

  const TransportOptions options;
  const TransportCallbacks callbacks;
  net::io_context io;
  tcp::acceptor acceptor;
  net::steady_timer accept_retry;  // after EMFILE: try again shortly instead of spinning
  WorkerPool pool;
  int bound_port = 0;
  // The I/O thread's: every open connection (the stop closes the idle ones).
  std::unordered_set<std::shared_ptr<HttpConnection>> connections;
  std::atomic<size_t> open_connections{0};
  std::atomic<bool> stopping{false};
  std::mutex run_mu;
  bool running = false;
  bool stopped = false;
};

// One client connection. Its state belongs to the I/O thread; a worker reaches it only by
// posting there (worker_write, after_response).
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  enum class Phase { kIdle, kHeader, kBody, kHandling, kClosing };

  HttpConnection(HttpTransport::Impl& t, tcp::socket socket)
      : t_(t), socket_(std::move(socket)), timer_(t.io) {}

  void start() { read_next(); }

  // The stop: a connection not answering a request closes now; one that is, after.
  void stop() {
    if (phase_ == Phase::kIdle || phase_ == Phase::kHeader || phase_ == Phase::kBody) close();
  }

  // On a worker: writes bytes and waits until the client took them; false when it did not.
  bool worker_write(std::string data) {
    auto done = std::make_shared<std::promise<bool>>();
    std::future<bool> result = done->get_future();
    net::post(t_.io, [self = shared_from_this(),
                      data = std::make_shared<std::string>(std::move(data)), done] {
      if (self->phase_ == Phase::kClosing) return done->set_value(false);
      self->arm_timer(std::chrono::seconds(HttpTransport::kWriteTimeoutS));
      net::async_write(self->socket_, net::buffer(*data),
                       [self, data, done](const error_code& ec, size_t) {
                         self->disarm_timer();
                         if (ec) self->close();
                         done->set_value(!ec);
                       });
    });
    return result.get();
  }

 private:
  using Parser = http::request_parser<http::string_body>;

  void read_next() {
    parser_.emplace();
    parser_->header_limit(uint32_t(t_.options.max_header_bytes));
    parser_->body_limit(uint64_t(t_.options.max_body_bytes));
    continue_sent_ = false;
    if (buffer_.size() > 0) {  // a pipelined request is already here
      phase_ = Phase::kHeader;
      arm_timer(std::chrono::seconds(t_.options.header_timeout_s));
      return parse();
    }
    phase_ = Phase::kIdle;
    arm_timer(std::chrono::seconds(t_.options.idle_timeout_s));
    read_some();
  }

  void read_some() {
    socket_.async_read_some(
        buffer_.prepare(kReadChunk),
        [self = shared_from_this()](const error_code& ec, size_t n) { self->on_read(ec, n); });
  }

  void on_read(const error_code& ec, size_t n) {
    if (phase_ == Phase::kClosing) return;
    buffer_.commit(n);
    if (ec) return close();  // the client closed or reset: nothing to answer
    if (phase_ == Phase::kIdle && n > 0) {
      // The first byte of a request starts its header deadline.
      phase_ = Phase::kHeader;
      arm_timer(std::chrono::seconds(t_.options.header_timeout_s));
    } else if (phase_ == Phase::kBody) {
      arm_timer(std::chrono::seconds(t_.options.header_timeout_s));  // the body moves
    }
    parse();
  }

  void parse() {
    while (buffer_.size() > 0 && !parser_->is_done()) {
      error_code ec;
      const size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more) break;
      if (ec) return refuse(fault_of(ec));
      if (used == 0) break;
    }
    if (parser_->is_header_done() && phase_ == Phase::kHeader) {
      phase_ = Phase::kBody;
      arm_timer(std::chrono::seconds(t_.options.header_timeout_s));
      const auto expect = parser_->get()[http::field::expect];
      if (!parser_->is_done() && iequals(expect, "100-continue") && !continue_sent_) {
        // curl waits a second for this before it sends a body over 1 KiB.
        continue_sent_ = true;
        auto line = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
        net::async_write(socket_, net::buffer(*line),
                         [self = shared_from_this(), line](const error_code& ec, size_t) {
                           if (self->phase_ == Phase::kClosing) return;
                           if (ec) return self->close();
                           self->parse();
                         });
        return;
      }
    }
    if (parser_->is_done()) return dispatch();
    read_some();
  }

  static TransportFault fault_of(const error_code& ec) {
    if (ec == http::error::body_limit) return TransportFault::kBodyTooLarge;
    if (ec == http::error::header_limit) return TransportFault::kHeadersTooLarge;
    if (ec == http::error::bad_content_length) return TransportFault::kBadContentLength;
    return TransportFault::kMalformed;
  }

  // What was parsed of the request (the header, when it was complete).
  HttpRequest partial_request() {
    HttpRequest q;
    if (!parser_ || !parser_->is_header_done()) return q;
    const auto& m = parser_->get();
    q.method = std::string(m.method_string());
    split_target(std::string(m.target()), &q);
    return q;
  }

  static void split_target(const std::string& target, HttpRequest* q) {
    const size_t mark = target.find('?');
    q->path = target.substr(0, mark);
    q->query = mark == std::string::npos ? std::string() : target.substr(mark + 1);
  }

  // A refusal: the error response, then close (the rest of the request is not read).
  void refuse(TransportFault fault) {
    disarm_timer();
    HttpResponse res;
    t_.callbacks.refuse(fault, partial_request(), res);
    phase_ = Phase::kHandling;
    auto data = std::make_shared<std::string>(whole_response(res, false, 0));
    arm_timer(std::chrono::seconds(HttpTransport::kWriteTimeoutS));
    net::async_write(
        socket_, net::buffer(*data),
        [self = shared_from_this(), data](const error_code&, size_t) { self->linger_close(); });
  }

  void dispatch() {
    disarm_timer();
    phase_ = Phase::kHandling;
    http::request<http::string_body> m = parser_->release();
    parser_.reset();
    auto q = std::make_shared<HttpRequest>();
    q->method = std::string(m.method_string());
    split_target(std::string(m.target()), q.get());
    for (const auto& field : m) {
      q->headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    q->body = std::move(m.body());
    const bool keep_alive = m.keep_alive();
    t_.pool.post([self = shared_from_this(), q, keep_alive] { self->answer(*q, keep_alive); });
  }

  // On a worker: runs the handler and writes its response.
  void answer(HttpRequest& q, bool keep_alive) {
    HttpResponse res;
    bool ok = true;
    t_.callbacks.handle(q, res);
    const auto connection = res.header("Connection");
    keep_alive = keep_alive && !t_.stopping && !(connection && iequals(*connection, "close"));
    if (!res.chunk_provider) {
      auto data =
          std::make_shared<std::string>(whole_response(res, keep_alive, t_.options.idle_timeout_s));
      net::post(t_.io, [self = shared_from_this(), data, keep_alive] {
        self->write_response(data, keep_alive);
      });
      return;
    }
    class Sink : public ChunkSink {
     public:
      explicit Sink(HttpConnection& c) : c_(c) {}
      bool write(std::string_view data) override {
        if (data.empty()) return ok_;  // an empty chunk would end the body
        return ok_ = ok_ && c_.worker_write(chunk(data));
      }
      void done() override { done_ = true; }
      HttpConnection& c_;
      bool ok_ = true;
      bool done_ = false;
    } sink(*this);
    ok = worker_write(response_head(res, keep_alive, t_.options.idle_timeout_s) +
                      "Transfer-Encoding: chunked\r\n\r\n");
    while (ok && !sink.done_) ok = res.chunk_provider(sink) && sink.ok_;
    if (ok) ok = worker_write("0\r\n\r\n");
    if (res.on_complete) res.on_complete(ok);
    net::post(t_.io,
              [self = shared_from_this(), keep = keep_alive && ok] { self->after_response(keep); });
  }

  void write_response(const std::shared_ptr<std::string>& data, bool keep_alive) {
    if (phase_ == Phase::kClosing) return;
    arm_timer(std::chrono::seconds(HttpTransport::kWriteTimeoutS));
    net::async_write(socket_, net::buffer(*data),
                     [self = shared_from_this(), data, keep_alive](const error_code& ec, size_t) {
                       if (self->phase_ == Phase::kClosing) return;
                       self->disarm_timer();
                       if (ec) return self->close();
                       self->after_response(keep_alive);
                     });
  }

  void after_response(bool keep_alive) {
    if (phase_ == Phase::kClosing) return;
    if (keep_alive && !t_.stopping) return read_next();
    linger_close();
  }

  // Stops sending, reads (and drops) what the client still sends until it closes or the
  // linger time passes, then closes.
  void linger_close() {
    if (phase_ == Phase::kClosing) return;
    phase_ = Phase::kClosing;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    timer_.expires_after(kLingerTime);
    timer_.async_wait([self = shared_from_this()](const error_code&) { self->close_socket(); });
    drain();
  }

  void drain() {
    buffer_.consume(buffer_.size());
    socket_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](const error_code& ec, size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->close_socket();
                              self->drain();
                            });
  }

  void close() {
    if (phase_ == Phase::kClosing && !socket_.is_open()) return;
    phase_ = Phase::kClosing;
    close_socket();
  }

  void close_socket() {
    error_code ignored;
    timer_.cancel();
    if (socket_.is_open()) socket_.close(ignored);
    if (t_.connections.erase(shared_from_this()) > 0) --t_.open_connections;
  }

  void on_timeout() {
    switch (phase_) {
      case Phase::kIdle:
        return close();
      case Phase::kHeader:
      case Phase::kBody:
        return refuse(TransportFault::kTimeout);
      case Phase::kHandling:  // a write the client does not take
      case Phase::kClosing:
        return close();
    }
  }

  template <typename Duration>
  void arm_timer(Duration d) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), generation](const error_code& ec) {
      if (ec || generation != self->timer_generation_) return;
      self->on_timeout();
    });
  }

  void disarm_timer() {
    ++timer_generation_;
    timer_.cancel();
  }

  HttpTransport::Impl& t_;
  tcp::socket socket_;
  net::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  Phase phase_ = Phase::kIdle;
  bool continue_sent_ = false;
};

void HttpTransport::Impl::accept() {
  acceptor.async_accept([this](const error_code& ec, tcp::socket socket) {
    if (stopping || !acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors (EMFILE) or a transient error: retry shortly rather than spin.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](const error_code& e) {
        if (!e) accept();
      });
      return;
    }
    error_code ignored;
    // Small writes (an SSE token) go out at once instead of waiting for the last one's ACK.
    socket.set_option(tcp::no_delay(true), ignored);
    auto c = std::make_shared<HttpConnection>(*this, std::move(socket));
    connections.insert(c);
    ++open_connections;
    c->start();
    accept();
  });
}

void HttpTransport::Impl::begin_stop() {
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
  // Copied: stopping a connection removes it from the set.
  const std::vector<std::shared_ptr<HttpConnection>> open(connections.begin(), connections.end());
  for (const auto& c : open) c->stop();
}

HttpTransport::HttpTransport(TransportOptions options, TransportCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(callbacks))) {}

HttpTransport::~HttpTransport() {
  stop();
}

core::Status HttpTransport::bind() {
  Impl& s = *impl_;
  const TransportOptions& o = s.options;
  const auto fail = [&o](const error_code& ec) {
    const std::string why = ec == net::error::address_in_use
                                ? ": the port is in use (another server is on it?)"
                                : ": " + ec.message();
    return core::Status::io_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                  why);
  };
  error_code ec;
  tcp::resolver resolver(s.io);
  const auto endpoints = resolver.resolve(
      o.host, std::to_string(o.port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return fail(ec);
  // Each address in turn, as getaddrinfo lists them; the first that binds is kept.
  for (const auto& entry : endpoints) {
    error_code e;
    tcp::acceptor& a = s.acceptor;
    if (a.is_open()) a.close(e);
    a.open(entry.endpoint().protocol(), e);
    if (!e) a.set_option(net::socket_base::reuse_address(true), e);
    if (!e) a.bind(entry.endpoint(), e);
    if (!e) a.listen(o.backlog, e);
    if (!e) {
      s.bound_port = a.local_endpoint(e).port();
      return core::Status::ok();
    }
    ec = e;
  }
  error_code ignored;
  s.acceptor.close(ignored);
  if (!ec) return core::Status::io_error("cannot listen on " + o.host + ": no address");
  return fail(ec);
}

int HttpTransport::port() const {
  return impl_->bound_port;
}

void HttpTransport::run() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.run_mu);
    if (s.stopped || !s.acceptor.is_open()) return;
    s.running = true;
  }
  auto guard = net::make_work_guard(s.io);  // run() returns only when stop() says so
  s.accept();
  s.io.run();
}

void HttpTransport::stop() {
  Impl& s = *impl_;
  bool was_running = false;
  {
    std::lock_guard<std::mutex> lock(s.run_mu);
    if (s.stopped) return;
    s.stopped = true;
    was_running = s.running;
  }
  s.stopping = true;
  if (!was_running) {
    error_code ignored;
    s.acceptor.close(ignored);
    s.pool.join();
    return;
  }
  net::post(s.io, [&s] { s.begin_stop(); });
  // The answers in progress finish (their connections close after them), then the I/O
  // thread ends.
  while (s.open_connections > 0 || !s.pool.idle()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  s.pool.join();
  s.io.stop();
}

}  // namespace anchorage::server

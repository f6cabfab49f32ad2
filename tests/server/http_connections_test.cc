// Slow and idle connections (issue 13 §1): a connection whose headers trickle in or that idles
// between keep-alive requests holds no worker, so 256 of them leave the service as fast as it
// was; a header that takes too long gets 408 and is closed; an idle keep-alive connection is
// served again after idling.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Reads one response with a Content-Length from fd, waiting at most timeout_s; "" on a
// timeout or a close before it was complete.
std::string read_response(int fd, double timeout_s) {
  std::string out;
  const auto t0 = Clock::now();
  char buf[4096];
  while (seconds_since(t0) < timeout_s) {
    const size_t head_end = out.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t cl = out.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end &&
          out.size() >= head_end + 4 + std::stoul(out.substr(cl + 16)))
        return out;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return "";
    out.append(buf, size_t(n));
  }
  return "";
}

// Waits for the peer to close fd (recv returns 0 or fails), reading what comes first; false
// when it stays open for timeout_s.
bool wait_closed(int fd, double timeout_s, std::string* got) {
  const auto t0 = Clock::now();
  char buf[4096];
  while (seconds_since(t0) < timeout_s) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
    got->append(buf, size_t(n));
  }
  return false;
}

// True while the server keeps fd open: nothing to read, no end of stream.
bool still_open(int fd) {
  char c;
  const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

constexpr const char* kHealth = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr const char* kHealthClose = "GET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

// Seconds a whole exchange takes on a new connection; -1 when it failed.
double timed(const ServerHarness& h, const std::string& request, const std::string& expect) {
  const auto t0 = Clock::now();
  const std::string reply = h.raw_exchange(request);
  if (reply.rfind(expect, 0) != 0) {
    ADD_FAILURE() << "unexpected reply: " << reply.substr(0, 120);
    return -1;
  }
  return seconds_since(t0);
}

// The best of three: one figure a loaded machine's hiccup does not set.
double best_of_three(const ServerHarness& h, const std::string& request) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) best = std::min(best, timed(h, request, "HTTP/1.1 200"));
  return best;
}

TEST(HttpConnections, ServiceGoesOnWith256SlowAndIdleConnections) {
  // 256 client sockets and as many on the server's side.
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 2048) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 2048);
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  ServerOptions o;
  // Far beyond the test's window: the server must serve around the slow connections, not
  // get rid of them.
  o.header_timeout_s = 120;
  o.idle_timeout_s = 120;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const std::string health = kHealthClose;
  const std::string chat = raw_post("/v1/chat/completions", chat_body("Hello there.", 2).dump());
  const double health_before = best_of_three(h, health);
  const double chat_before = best_of_three(h, chat);

  constexpr int kEach = 128;
  std::vector<int> slow, idle;
  for (int i = 0; i < kEach; ++i) {
    const int fd = h.connect_socket();
    ASSERT_GE(fd, 0);
    ServerHarness::send_all(fd, "POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nX-Slow: ");
    slow.push_back(fd);
  }
  for (int i = 0; i < kEach; ++i) {
    const int fd = h.connect_socket();
    ASSERT_GE(fd, 0);
    ServerHarness::send_all(fd, kHealth);
    ASSERT_EQ(read_response(fd, 30).rfind("HTTP/1.1 200", 0), 0u) << "idle connection " << i;
    idle.push_back(fd);  // keep-alive: it stays open, idle
  }
  // The slow ones go on sending a byte of their header now and then.
  std::atomic<bool> trickle{true};
  std::thread trickler([&] {
    while (trickle) {
      for (int fd : slow) ::send(fd, "a", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  const double health_during = best_of_three(h, health);
  const double chat_during = best_of_three(h, chat);
  trickle = false;
  trickler.join();
  std::printf(
      "with 256 slow/idle connections: GET /health %.4f s -> %.4f s, chat %.4f s -> %.4f s\n",
      health_before, health_during, chat_before, chat_during);
  // A generous bound relative to the same request before: a starved server waits for a
  // worker to come free (seconds, or never while the headers trickle), not a few ms more.
  EXPECT_LT(health_during, 10 * health_before + 2.0) << "before " << health_before << " s";
  EXPECT_LT(chat_during, 10 * chat_before + 2.0) << "before " << chat_before << " s";
  // Every slow and idle connection is still open: they were served around, not reaped.
  int open_slow = 0, open_idle = 0;
  for (int fd : slow) open_slow += still_open(fd);
  for (int fd : idle) open_idle += still_open(fd);
  EXPECT_EQ(open_slow, kEach);
  EXPECT_EQ(open_idle, kEach);
  // And an idle one answers its next request.
  ServerHarness::send_all(idle[0], kHealth);
  EXPECT_EQ(read_response(idle[0], 30).rfind("HTTP/1.1 200", 0), 0u);
  for (int fd : slow) ::close(fd);
  for (int fd : idle) ::close(fd);
}

// Headers still incomplete header_timeout_s after their first byte get 408 and a close, even
// while bytes keep coming (the deadline is for the whole header, not per read).
TEST(HttpConnections, SlowHeaderIsClosedAtItsDeadline) {
  ServerOptions o;
  o.header_timeout_s = 1;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const int fd = h.connect_socket();
  ASSERT_GE(fd, 0);
  const auto t0 = Clock::now();
  ServerHarness::send_all(fd, "GET /health HTTP/1.1\r\nX-Slow: ");
  std::string got;
  bool closed = false;
  while (!closed && seconds_since(t0) < 10) {
    ::send(fd, "a", 1, MSG_NOSIGNAL);
    closed = wait_closed(fd, 0.2, &got);
  }
  const double took = seconds_since(t0);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 6.0);
  EXPECT_EQ(got.rfind("HTTP/1.1 408", 0), 0u) << got.substr(0, 120);
  EXPECT_NE(got.find("\"code\":\"request_timeout\""), std::string::npos) << got;
  // The server lives on.
  EXPECT_GT(timed(h, kHealthClose, "HTTP/1.1 200"), 0);
}

// A keep-alive connection idle for longer than the header deadline is served again (idling is
// not a slow header); one idle past idle_timeout_s is closed.
TEST(HttpConnections, IdleKeepAliveConnectionIsServedAgain) {
  ServerOptions o;
  o.header_timeout_s = 1;
  o.idle_timeout_s = 3;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const int fd = h.connect_socket();
  ASSERT_GE(fd, 0);
  ServerHarness::send_all(fd, kHealth);
  const std::string first = read_response(fd, 30);
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first.substr(0, 120);
  EXPECT_NE(first.find("Keep-Alive: timeout=3"), std::string::npos) << first;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ServerHarness::send_all(fd, kHealth);
  EXPECT_EQ(read_response(fd, 30).rfind("HTTP/1.1 200", 0), 0u);
  // Now idle past the idle timeout: closed, with nothing written.
  std::string got;
  const auto t0 = Clock::now();
  EXPECT_TRUE(wait_closed(fd, 10, &got));
  EXPECT_GE(seconds_since(t0), 2.5);
  EXPECT_EQ(got, "");
  ::close(fd);
}

}  // namespace
}  // namespace anchorage::server::testing

// The HTTP transport itself: who owns a port, and how many connections the listener takes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

// A second server on a port another one holds must fail to bind (SO_REUSEPORT, which
// cpp-httplib used to set, let both bind and the kernel split connections).
TEST(HttpTransport, SecondServerOnTheSamePortFailsToBind) {
  ServerHarness first;
  ASSERT_TRUE(first.ok());
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = first.port();
  o.model_name = "anchorage-tiny";
  HttpServer second(o, *shared_model());
  const core::Status bound = second.bind();
  EXPECT_FALSE(bound.is_ok());
  EXPECT_NE(bound.to_string().find("in use"), std::string::npos) << bound.to_string();
  // The first one still answers.
  auto r = first.client().Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// The listen backlog is at least the queue capacity: as many connections as the queue takes
// all complete their handshake while the server accepts none (no worker is free to: the
// listener is blocked by never running serve()).
TEST(HttpTransport, ListenBacklogCoversTheQueue) {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.model_name = "anchorage-tiny";
  o.queue_capacity = 32;
  HttpServer server(o, *shared_model());
  ASSERT_TRUE(server.bind().is_ok());
  std::vector<int> fds;
  int connected = 0;
  for (size_t i = 0; i < o.queue_capacity; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  }
  // A non-blocking connect completes once the kernel put it in the accept queue (at once on
  // loopback); one past the backlog stays in SYN_SENT (its SYN is dropped).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int fd : fds) {
    fd_set w;
    FD_ZERO(&w);
    FD_SET(fd, &w);
    timeval tv{0, 0};
    if (::select(fd + 1, nullptr, &w, nullptr, &tv) == 1) {
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) ++connected;
    }
  }
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(connected, int(o.queue_capacity));
}

}  // namespace
}  // namespace anchorage::server::testing

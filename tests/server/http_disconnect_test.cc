// A client that hangs up mid-stream (or mid-decode of a whole answer) stops its generation: the
// next write fails, the job is cancelled, and the engine stops at its next token (long before
// max_tokens).
#include <gtest/gtest.h>

#include "server/engine_queue.h"
#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

// The value of a metrics line "<name> <value>", or -1.
int64_t metric(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + name.size() + 2));
}

void wait_until_idle(ServerHarness& h) {
  EngineQueue& q = h.server().test_queue();
  while (q.running() || q.depth() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

TEST(HttpDisconnect, HangingUpMidStreamCancelsTheGeneration) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  constexpr int kMaxTokens = 4000;
  Json body = chat_body("Go on forever.", kMaxTokens);
  body["stream"] = true;
  const int fd = h.connect_socket();
  ASSERT_GE(fd, 0);
  ServerHarness::send_all(fd, raw_post("/v1/chat/completions", body.dump()));
  // Read until two events (the role chunk and a first token) are in, then hang up.
  std::string got;
  char buf[4096];
  size_t events = 0;
  while (events < 2) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0) << "the server closed first";
    got.append(buf, size_t(n));
    events = 0;
    for (size_t p = got.find("data: "); p != std::string::npos; p = got.find("data: ", p + 1)) {
      ++events;
    }
  }
  ::close(fd);
  wait_until_idle(h);

  auto m = h.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(metric(m->body, "anchorage_generations_total{end=\"cancelled\"}"), 1) << m->body;
  const int64_t generated = metric(m->body, "anchorage_completion_tokens_total");
  EXPECT_GE(generated, 1);
  EXPECT_LT(generated, kMaxTokens);

  // The server goes on serving.
  auto r = h.post("/v1/chat/completions", chat_body("still there?", 2).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// A non-streamed request's client that hangs up during the decode is found too (the answer
// writes a space now and then once its 200 is out) and the generation stops.
TEST(HttpDisconnect, HangingUpOnAWholeAnswerCancelsTheGeneration) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  constexpr int kMaxTokens = 4000;
  const int fd = h.connect_socket();
  ASSERT_GE(fd, 0);
  ServerHarness::send_all(
      fd, raw_post("/v1/chat/completions", chat_body("Go on forever.", kMaxTokens).dump()));
  std::string got;
  char buf[4096];
  while (got.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0) << "the server closed first";
    got.append(buf, size_t(n));
  }
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got.substr(0, 40);
  ::close(fd);
  wait_until_idle(h);
  auto m = h.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(metric(m->body, "anchorage_generations_total{end=\"cancelled\"}"), 1) << m->body;
  EXPECT_LT(metric(m->body, "anchorage_completion_tokens_total"), kMaxTokens);
}

// The SDK's way to abort: the client stops reading and closes (the client's receiver says stop).
TEST(HttpDisconnect, ClientAbortThroughTheHttpLibrary) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Another long one.", 4000);
  body["stream"] = true;
  int chunks = 0;
  const auto s = h.post_streamed("/v1/chat/completions", body.dump(),
                                 [&](const std::string&) { return ++chunks < 3; });
  EXPECT_EQ(s.status, 0);  // aborted by us
  wait_until_idle(h);
  auto m = h.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(metric(m->body, "anchorage_generations_total{end=\"cancelled\"}"), 1);
  EXPECT_LT(metric(m->body, "anchorage_completion_tokens_total"), 4000);
}

}  // namespace
}  // namespace anchorage::server::testing

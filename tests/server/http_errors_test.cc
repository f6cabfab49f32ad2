// Bad input over HTTP: each gets a 4xx with the OpenAI error object naming the field, and
// nothing crashes; a full queue gets 429 with Retry-After; a shutdown refuses with 503.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "server/engine_queue.h"
#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

// Posts and checks the status and the error object; returns it.
Json expect_error(const ServerHarness& h, const std::string& path, const std::string& body,
                  int status, const std::string& param) {
  auto r = h.post(path, body);
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, status) << body.substr(0, 200) << " -> " << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const Json j = parse_json(r->body);
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_TRUE(j["error"]["type"].is_string());
  if (param.empty()) {
    EXPECT_TRUE(j["error"]["param"].is_null()) << r->body;
  } else {
    EXPECT_EQ(j["error"]["param"], param) << r->body;
  }
  return j;
}

TEST(HttpErrors, FieldsAreNamed) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  const std::string chat = "/v1/chat/completions";
  expect_error(h, chat, "{not json", 400, "");
  expect_error(h, chat, "[]", 400, "");
  expect_error(h, chat, R"({"messages": "hello"})", 400, "messages");
  expect_error(h, chat, R"({"messages": [{"role": "robot", "content": "x"}]})", 400,
               "messages[0].role");
  Json b = chat_body("x", 4);
  b["max_tokens"] = -1;
  expect_error(h, chat, b.dump(), 400, "max_tokens");
  b = chat_body("x", 4);
  b["temperature"] = "warm";
  expect_error(h, chat, b.dump(), 400, "temperature");
  b = chat_body("x", 4);
  b["n"] = 2;
  const Json n2 = expect_error(h, chat, b.dump(), 400, "n");
  EXPECT_EQ(n2["error"]["code"], "unsupported_value");
  b = chat_body("x", 4);
  b["logprobs"] = true;
  b["top_logprobs"] = 50;
  expect_error(h, chat, b.dump(), 400, "top_logprobs");
  expect_error(h, "/v1/completions", R"({"prompt": [1, 2, 999999]})", 400, "prompt[2]");
  expect_error(h, "/v1/completions", R"({"prompt": ""})", 400, "prompt");
  // Nothing above reached the engine or broke the server.
  auto ok = h.post(chat, chat_body("fine", 1).dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpErrors, PromptLongerThanTheContext) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json ids = Json::array();
  for (int64_t i = 0; i <= kTestCapacity; ++i) ids.push_back(100 + i % 1000);
  const Json e = expect_error(h, "/v1/completions", Json{{"prompt", ids}}.dump(), 400, "prompt");
  EXPECT_EQ(e["error"]["code"], "context_length_exceeded");
  std::string long_text;
  for (int i = 0; i < int(kTestCapacity); ++i) long_text += " word" + std::to_string(i);
  expect_error(h, "/v1/chat/completions", chat_body(long_text, 1).dump(), 400, "messages");
}

TEST(HttpErrors, OversizedBodyAndMalformedHttp) {
  ServerOptions o;
  o.max_body_bytes = 4096;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json e =
      expect_error(h, "/v1/chat/completions", chat_body(std::string(5000, 'a'), 1).dump(), 413, "");
  EXPECT_EQ(e["error"]["code"], "request_too_large");
  // A request line that is not HTTP gets a JSON 400 as well, and the server lives on.
  const std::string reply = h.raw_exchange("GARBAGE\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply.substr(0, 80);
  EXPECT_NE(reply.find("\"error\""), std::string::npos);
  auto ok = h.post("/v1/chat/completions", chat_body("fine", 1).dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpErrors, FullQueueAnswers429WithRetryAfter) {
  ServerOptions o;
  o.queue_capacity = 1;
  o.retry_after_seconds = 3;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  h.server().test_queue().test_hold(true);  // the engine takes no job: the queue fills
  Json body = chat_body("wait", 1);
  body["stream"] = true;
  // The first streamed request takes the one queue slot; its headers are out at once.
  std::thread waiting([&] {
    const auto s = h.post_streamed("/v1/chat/completions", body.dump());
    EXPECT_EQ(s.status, 200);
    EXPECT_NE(s.body.find("data: [DONE]"), std::string::npos);
  });
  while (h.server().test_queue().depth() < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto r = h.post("/v1/chat/completions", chat_body("one more", 1).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "3");
  const Json j = parse_json(r->body);
  EXPECT_EQ(j["error"]["code"], "queue_full");
  h.server().test_queue().test_hold(false);
  waiting.join();
  auto m = h.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("anchorage_queue_full_total 1\n"), std::string::npos);
}

// The shutdown tests' scene: a streamed request running on the engine, one more request
// (sent by `waiting` on its own thread) held in the queue, then shutdown() on a third thread.
// Returns the running stream's body once all three have ended.
std::string shutdown_with_one_waiting(ServerHarness& h, const std::function<void()>& waiting) {
  Json running = chat_body("run", 150);
  running["stream"] = true;
  std::atomic<bool> running_done{false};
  std::string running_body;
  std::thread t1([&] {
    running_body = h.post_streamed("/v1/chat/completions", running.dump()).body;
    running_done = true;
  });
  while (!h.server().test_queue().running() && !running_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  h.server().test_queue().test_hold(true);  // keep the next one waiting
  std::thread t2(waiting);
  while (h.server().test_queue().depth() < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread stopper([&] { h.stop(); });
  t2.join();
  t1.join();
  stopper.join();
  return running_body;
}

// shutdown() (what SIGTERM calls): the running request finishes, a waiting one gets 503,
// /health turns 503 meanwhile, serve() returns.
TEST(HttpErrors, ShutdownFinishesTheRunningRequest) {
  ServerOptions o;
  o.queue_capacity = 2;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  int waiting_status = 0;
  std::string waiting_body;
  const std::string running_body = shutdown_with_one_waiting(h, [&] {
    auto r = h.post("/v1/chat/completions", chat_body("queued", 5).dump());
    if (r) {
      waiting_status = r->status;
      waiting_body = r->body;
    }
  });
  EXPECT_EQ(waiting_status, 503);
  EXPECT_EQ(parse_json(waiting_body)["error"]["code"], "shutting_down");
  // The running stream was not cut: it has its finish chunk and [DONE].
  EXPECT_NE(running_body.find("\"finish_reason\":\""), std::string::npos);
  EXPECT_EQ(running_body.size() >= 14 ? running_body.substr(running_body.size() - 14) : "",
            "data: [DONE]\n\n");
}

// A streamed request still waiting in the queue at shutdown gets a 503 status (its headers
// wait until the engine takes the job), not 200 and then an error event.
TEST(HttpErrors, QueuedStreamGets503OnShutdown) {
  ServerOptions o;
  o.queue_capacity = 2;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  Json queued = chat_body("queued", 5);
  queued["stream"] = true;
  ServerHarness::Streamed waiting;
  shutdown_with_one_waiting(
      h, [&] { waiting = h.post_streamed("/v1/chat/completions", queued.dump()); });
  EXPECT_EQ(waiting.status, 503) << waiting.body;
  EXPECT_EQ(waiting.body.find("data:"), std::string::npos) << waiting.body;
}

// A Content-Length that is not a non-negative integer is an immediate 400 naming it (the
// transport before read toward the length and answered 413 after its read timeout).
TEST(HttpErrors, NegativeContentLengthIs400) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  for (const char* len : {"-1", "12x", "+5"}) {
    const std::string reply = h.raw_exchange(
        std::string("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: ") + len +
        "\r\nContent-Type: application/json\r\n\r\n{}");
    EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << len << ": " << reply.substr(0, 80);
    EXPECT_NE(reply.find("\"param\":\"Content-Length\""), std::string::npos) << reply;
  }
}

// A POST with no body and no Content-Length (curl -X POST without -d) reaches its route with
// an empty body: the cache clear works, a chat says what its body lacks.
TEST(HttpErrors, PostWithoutContentLengthReachesTheRoute) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  std::string reply =
      h.raw_exchange("POST /v1/cache/clear HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply.substr(0, 200);
  reply =
      h.raw_exchange("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply.substr(0, 200);
  EXPECT_EQ(reply.find("Content-Length\",\"code"), std::string::npos) << reply;
}

// --drain-s bounds a shutdown: a generation still running at the deadline is cut, and its
// stream ends with a shutting_down error event (not a silent stop, nor an unbounded wait).
TEST(HttpErrors, DrainDeadlineCutsTheRunningGeneration) {
  ServerOptions o;
  o.drain_s = 1;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  Json running = chat_body("run", kTestCapacity - 64);
  running["stream"] = true;
  running["ignore_eos"] = true;
  std::atomic<bool> running_done{false};
  std::atomic<bool> got_tokens{false};
  std::string body;
  std::thread t1([&] {
    body = h.post_streamed("/v1/chat/completions", running.dump(), [&](const std::string& so_far) {
              if (so_far.size() > 2000) got_tokens = true;
              return true;
            }).body;
    running_done = true;
  });
  while (!got_tokens && !running_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_FALSE(running_done.load()) << "the generation ended before the shutdown";
  h.stop();  // returns once the cut generation's stream ended
  t1.join();
  EXPECT_NE(body.find("shutting_down"), std::string::npos) << body.substr(body.size() - 300);
}

}  // namespace
}  // namespace anchorage::server::testing

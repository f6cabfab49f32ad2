// Streamed responses (SSE): the framing of every event, the role chunk first, one finish
// chunk, the usage chunk only with stream_options.include_usage, [DONE] last; streamed text
// equal to the whole response's; stop strings; completions streaming.
#include <gtest/gtest.h>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

struct Parsed {
  std::vector<Json> chunks;  // every data event but [DONE]
  bool done_last = false;
};

Parsed parse_stream(const std::string& body) {
  Parsed p;
  const auto events = sse_data(body);
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i] == "[DONE]") {
      p.done_last = i + 1 == events.size();
      continue;
    }
    p.chunks.push_back(parse_json(events[i]));
  }
  return p;
}

TEST(HttpStream, ChatFramingUsageAndDone) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Tell me a story.", 8);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  const auto s = h.post_streamed("/v1/chat/completions", body.dump());
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(s.header("Content-Type"), "text/event-stream");
  const Parsed p = parse_stream(s.body);
  ASSERT_TRUE(p.done_last);
  ASSERT_GE(p.chunks.size(), 3u);
  const std::string id = p.chunks[0]["id"];
  // First: the role; last: the usage; the one before it: the finish.
  EXPECT_EQ(p.chunks[0]["choices"][0]["delta"]["role"], "assistant");
  const Json& usage_chunk = p.chunks.back();
  EXPECT_EQ(usage_chunk["choices"], Json::array());
  const Json& usage = usage_chunk["usage"];
  EXPECT_GT(usage["prompt_tokens"].get<int>(), 0);
  EXPECT_EQ(usage["total_tokens"],
            usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>());
  const Json& finish_chunk = p.chunks[p.chunks.size() - 2];
  EXPECT_FALSE(finish_chunk["choices"][0]["finish_reason"].is_null());
  std::string content, reasoning;
  int finishes = 0;
  for (size_t i = 0; i < p.chunks.size(); ++i) {
    const Json& c = p.chunks[i];
    EXPECT_EQ(c["id"], id);
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_TRUE(c.contains("usage"));  // null on every chunk but the last
    if (i + 1 < p.chunks.size()) {
      EXPECT_TRUE(c["usage"].is_null());
    }
    if (c["choices"].empty()) continue;
    const Json& choice = c["choices"][0];
    if (!choice["finish_reason"].is_null()) ++finishes;
    if (choice["delta"].contains("content"))
      content += choice["delta"]["content"].get<std::string>();
    if (choice["delta"].contains("reasoning_content"))
      reasoning += choice["delta"]["reasoning_content"].get<std::string>();
  }
  EXPECT_EQ(finishes, 1);

  // The same request whole: the same text and usage counts.
  body["stream"] = false;
  body.erase("stream_options");
  auto r = h.post("/v1/chat/completions", body.dump());
  ASSERT_TRUE(r);
  const Json whole = parse_json(r->body);
  EXPECT_EQ(whole["choices"][0]["message"]["content"], content);
  EXPECT_EQ(whole["choices"][0]["message"].value("reasoning_content", ""), reasoning);
  EXPECT_EQ(whole["usage"]["completion_tokens"], usage["completion_tokens"]);
  EXPECT_EQ(whole["choices"][0]["finish_reason"], finish_chunk["choices"][0]["finish_reason"]);
}

TEST(HttpStream, NoUsageChunkUnlessAsked) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Hi", 3);
  body["stream"] = true;
  const Parsed p = parse_stream(h.post_streamed("/v1/chat/completions", body.dump()).body);
  ASSERT_TRUE(p.done_last);
  for (const Json& c : p.chunks) {
    EXPECT_FALSE(c.contains("usage"));
    EXPECT_EQ(c["choices"].size(), 1u);
  }
}

TEST(HttpStream, StopStringCutsTheText) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  // Find a greedy continuation, then ask again with part of it as a stop string.
  Json body = Json{{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}};
  auto r = h.post("/v1/completions", body.dump());
  ASSERT_TRUE(r);
  const Json free_run = parse_json(r->body);
  const std::string text = free_run["choices"][0]["text"];
  ASSERT_GE(text.size(), 8u);
  // Three bytes from the fifth, widened to whole UTF-8 characters.
  size_t from = 4, to = 7;
  while (from < text.size() && (uint8_t(text[from]) & 0xC0) == 0x80) ++from;
  to = std::max(to, from + 1);
  while (to < text.size() && (uint8_t(text[to]) & 0xC0) == 0x80) ++to;
  ASSERT_LT(from, text.size());
  const std::string stop = text.substr(from, to - from);
  const size_t cut = text.find(stop);
  body["stop"] = Json::array({stop});
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  const Parsed p = parse_stream(h.post_streamed("/v1/completions", body.dump()).body);
  ASSERT_TRUE(p.done_last);
  std::string streamed;
  std::string finish;
  for (const Json& c : p.chunks) {
    EXPECT_EQ(c["object"], "text_completion");
    if (c["choices"].empty()) continue;
    streamed += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(streamed, text.substr(0, cut));
  EXPECT_EQ(finish, "stop");
  // The generation ended at the token that completed the stop string.
  EXPECT_LT(p.chunks.back()["usage"]["completion_tokens"].get<int>(), 12);
}

}  // namespace
}  // namespace anchorage::server::testing

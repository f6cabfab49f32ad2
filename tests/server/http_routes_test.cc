// The HTTP routes end to end on the tiny model: /v1/models, /v1/models/{id}, /health,
// /metrics, unknown routes, non-streamed chat and completions (text and token ids) with their
// usage, sessions from the body or the header, and greedy determinism with logprobs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

TEST(HttpRoutes, InfoRoutes) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  auto c = h.client();
  auto r = c.Get("/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  Json j = parse_json(r->body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "anchorage-tiny");

  r = c.Get("/v1/models/anchorage-tiny");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(parse_json(r->body)["object"], "model");
  r = c.Get("/v1/models/gpt-9");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(parse_json(r->body)["error"]["code"], "model_not_found");

  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(parse_json(r->body)["status"], "ok");

  r = c.Get("/v1/nothing-secret-9f3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  j = parse_json(r->body);
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["code"], "unknown_url");
  // The client's path is not quoted back (it is client text).
  EXPECT_EQ(r->body.find("secret-9f3"), std::string::npos) << r->body;

  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
  EXPECT_EQ(r->body.find("secret-9f3"), std::string::npos);
  EXPECT_NE(r->body.find("anchorage_requests_total{route=\"/v1/models\",status=\"200\"} 1"),
            std::string::npos);
  EXPECT_NE(r->body.find("anchorage_requests_total{route=\"other\",status=\"404\"} 1"),
            std::string::npos);
  EXPECT_NE(r->body.find("anchorage_queue_depth 0"), std::string::npos);
}

TEST(HttpRoutes, ChatCompletionWhole) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Say hello.", 6);
  body["prompt_cache_key"] = "conv-42";
  auto r = h.post("/v1/chat/completions", body.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const Json j = parse_json(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "anchorage-tiny");
  const Json& choice = j["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_TRUE(choice["logprobs"].is_null());
  const std::string finish = choice["finish_reason"];
  EXPECT_TRUE(finish == "length" || finish == "stop") << finish;
  const Json& u = j["usage"];
  EXPECT_GT(u["prompt_tokens"].get<int>(), 5);
  EXPECT_LE(u["completion_tokens"].get<int>(), 6);
  EXPECT_EQ(u["total_tokens"], u["prompt_tokens"].get<int>() + u["completion_tokens"].get<int>());
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(u["anchorage"]["cache"]["tier"], "none");
  EXPECT_EQ(u["anchorage"]["cache"]["source"], "cold");
  EXPECT_EQ(u["anchorage"]["cache"]["reread"], u["prompt_tokens"]);
  EXPECT_EQ(u["anchorage"]["session"], "body");

  // The header names the session when the body does not.
  r = h.post("/v1/chat/completions", chat_body("x", 1).dump(), {{"X-Session-Id", "ses_1"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(parse_json(r->body)["usage"]["anchorage"]["session"], "header");
}

TEST(HttpRoutes, CompletionsTextAndTokenIds) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = Json{{"prompt", "The capital of France is"},
                   {"max_tokens", 4},
                   {"temperature", 0},
                   {"logprobs", 2}};
  auto r = h.post("/v1/completions", body.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  Json j = parse_json(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  const Json& lp = j["choices"][0]["logprobs"];
  const size_t n = lp["tokens"].size();
  EXPECT_EQ(int(n), j["usage"]["completion_tokens"].get<int>());
  EXPECT_EQ(lp["token_logprobs"].size(), n);
  EXPECT_EQ(lp["top_logprobs"].size(), n);
  EXPECT_EQ(lp["text_offset"][0], 0);
  std::string joined;
  for (const auto& t : lp["tokens"]) joined += t.get<std::string>();
  EXPECT_EQ(joined, j["choices"][0]["text"]);  // greedy text is the tokens' concatenation

  // The same prompt as ids (from the tokenizer) gives the same completion.
  const auto ids = h.model().tokenizer->encode("The capital of France is");
  body["prompt"] = ids;
  r = h.post("/v1/completions", body.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json k = parse_json(r->body);
  EXPECT_EQ(k["choices"][0]["text"], j["choices"][0]["text"]);
  EXPECT_EQ(k["choices"][0]["logprobs"], j["choices"][0]["logprobs"]);
  EXPECT_EQ(k["usage"]["prompt_tokens"], int(ids.size()));
}

// POSTs a completion that must answer 200; its body, or null (and a failure).
Json completion_ok(const ServerHarness& h, const Json& body) {
  auto r = h.post("/v1/completions", body.dump());
  if (!r) {
    ADD_FAILURE() << "the request failed";
    return nullptr;
  }
  EXPECT_EQ(r->status, 200) << r->body;
  return r->status == 200 ? parse_json(r->body) : Json(nullptr);
}

// ignore_eos (llama.cpp's and vLLM's): with the greedy answer's first token made an
// end-of-sequence id, the answer stops there; with ignore_eos it runs to max_tokens and is the
// answer of a server without that id, logprob bits included; a stop string still ends it.
TEST(HttpRoutes, IgnoreEosRunsPastTheEndOfSequenceIds) {
  const std::string prompt = "The capital of France is";
  Json body = Json{{"prompt", prompt}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 1}};
  std::string plain_text;
  Json plain_logprobs;
  {
    ServerHarness plain;
    ASSERT_TRUE(plain.ok());
    const Json j = completion_ok(plain, body);
    ASSERT_FALSE(j.is_null());
    ASSERT_EQ(j["choices"][0]["finish_reason"], "length");
    plain_text = j["choices"][0]["text"].get<std::string>();
    plain_logprobs = j["choices"][0]["logprobs"];
  }
  // The greedy first token, from the engine itself.
  auto own = own_engine(shared_model());
  ASSERT_NE(own, nullptr);
  ASSERT_TRUE(own->engine->prefill(own->tokenizer->encode(prompt)).is_ok());
  const std::span<const float> logits = own->engine->logits();
  const int32_t first = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  std::vector<int32_t> stop_ids = own->stop_ids;
  stop_ids.push_back(first);

  ServerHarness h(ServerOptions{}, &stop_ids);
  ASSERT_TRUE(h.ok());
  Json j = completion_ok(h, body);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["text"], "");
  EXPECT_EQ(j["usage"]["completion_tokens"], 1);  // the stop token is counted, not shown

  body["ignore_eos"] = true;
  j = completion_ok(h, body);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["choices"][0]["text"], plain_text);
  EXPECT_EQ(j["choices"][0]["logprobs"], plain_logprobs);  // the same doubles, so the same bits

  // A stop string still ends it: the plain answer's second token's text (the tiny model's
  // greedy answer is fixed, and that token's text is in it).
  const std::string stop = plain_logprobs["tokens"][1].get<std::string>();
  ASSERT_FALSE(stop.empty());
  const size_t at = plain_text.find(stop);
  ASSERT_NE(at, std::string::npos) << plain_text;
  body["stop"] = stop;
  j = completion_ok(h, body);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["text"], plain_text.substr(0, at));

  // Not a boolean: a 400 naming the field.
  body.erase("stop");
  body["ignore_eos"] = "yes";
  auto r = h.post("/v1/completions", body.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("ignore_eos"), std::string::npos) << r->body;
}

// Greedy twice: the same tokens and the same logprob bits, whole and streamed.
TEST(HttpRoutes, GreedyIsDeterministicWithLogprobs) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Count to ten.", 10);
  body["logprobs"] = true;
  body["top_logprobs"] = 3;
  std::vector<Json> runs;
  for (int i = 0; i < 2; ++i) {
    auto r = h.post("/v1/chat/completions", body.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    runs.push_back(parse_json(r->body)["choices"][0]["logprobs"]["content"]);
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  ASSERT_FALSE(runs[0].empty());
  for (size_t i = 0; i < runs[0].size(); ++i) {
    const Json& a = runs[0][i];
    const Json& b = runs[1][i];
    EXPECT_EQ(a["bytes"], b["bytes"]);
    const float fa = float(a["logprob"].get<double>()), fb = float(b["logprob"].get<double>());
    EXPECT_EQ(std::memcmp(&fa, &fb, sizeof(float)), 0);
    EXPECT_EQ(a["top_logprobs"], b["top_logprobs"]);
    ASSERT_EQ(a["top_logprobs"].size(), 3u);
    // Greedy picks the most likely token: it leads its own alternatives.
    EXPECT_EQ(a["top_logprobs"][0]["bytes"], a["bytes"]);
    EXPECT_EQ(a["top_logprobs"][0]["logprob"], a["logprob"]);
    EXPECT_LT(a["logprob"].get<double>(), 0.0);
  }

  // Streamed: the chunks' logprobs concatenate to the same list.
  body["stream"] = true;
  const auto s = h.post_streamed("/v1/chat/completions", body.dump());
  ASSERT_EQ(s.status, 200);
  Json streamed = Json::array();
  for (const std::string& data : sse_data(s.body)) {
    if (data == "[DONE]") continue;
    const Json chunk = parse_json(data);
    if (chunk["choices"].empty()) continue;
    const Json& lp = chunk["choices"][0]["logprobs"];
    if (lp.is_null()) continue;
    for (const auto& e : lp["content"]) streamed.push_back(e);
  }
  EXPECT_EQ(streamed, runs[0]);
}

// Seeded sampling is reproducible; different seeds (almost surely) differ.
TEST(HttpRoutes, SeededSamplingIsReproducible) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json body = chat_body("Write a poem.", 12);
  body["temperature"] = 1.0;
  body["top_p"] = 0.95;
  body["top_k"] = 50;
  body["min_p"] = 0.01;
  body["seed"] = 1234;
  body["logprobs"] = true;
  auto a = h.post("/v1/chat/completions", body.dump());
  auto b = h.post("/v1/chat/completions", body.dump());
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->status, 200) << a->body;
  const Json ja = parse_json(a->body), jb = parse_json(b->body);
  EXPECT_EQ(ja["choices"][0]["logprobs"], jb["choices"][0]["logprobs"]);
  EXPECT_EQ(ja["choices"][0]["message"], jb["choices"][0]["message"]);
}

}  // namespace
}  // namespace anchorage::server::testing

namespace anchorage::server::testing {
namespace {

Json grep_tool() {
  return Json::parse(R"({"type": "function", "function": {"name": "grep", "description": "d",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}})");
}

// tool_choice naming a function is enforced: the answer is that call, whatever the random
// model would have written (its head is forced; the arguments are the model's).
TEST(HttpRoutes, NamedToolChoiceIsEnforced) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  for (const bool stream : {false, true}) {
    Json body = chat_body("Find it.", 40);
    body["tools"] = Json::array({grep_tool()});
    body["tool_choice"] = Json::parse(R"({"type": "function", "function": {"name": "grep"}})");
    body["chat_template_kwargs"] = {{"enable_thinking", false}};
    std::string content;
    std::vector<std::string> names;
    if (!stream) {
      auto r = h.post("/v1/chat/completions", body.dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      const Json msg = parse_json(r->body)["choices"][0]["message"];
      if (msg["content"].is_string()) content = msg["content"];
      if (msg.contains("tool_calls"))
        for (const Json& c : msg["tool_calls"]) names.push_back(c["function"]["name"]);
    } else {
      body["stream"] = true;
      auto s = h.post_streamed("/v1/chat/completions", body.dump());
      ASSERT_EQ(s.status, 200);
      for (const std::string& data : sse_data(s.body)) {
        if (data == "[DONE]") continue;
        const Json chunk = parse_json(data);
        if (chunk["choices"].empty()) continue;
        const Json& d = chunk["choices"][0]["delta"];
        if (d.contains("content") && d["content"].is_string()) content += d["content"];
        if (d.contains("tool_calls"))
          for (const Json& c : d["tool_calls"]) names.push_back(c["function"]["name"]);
      }
    }
    // Either the call closed (a tool call named grep) or it is still open at max_tokens and
    // stays text, byte for byte: the forced head is there.
    if (names.empty()) {
      const size_t start = content.find_first_not_of(" \t\r\n");
      ASSERT_NE(start, std::string::npos) << "stream=" << stream;
      const std::string head = "<tool_call>\n{\"name\": \"grep\", \"arguments\": ";
      EXPECT_EQ(content.substr(start, head.size()), head) << "stream=" << stream;
    } else {
      EXPECT_EQ(names[0], "grep");
    }
  }
}

}  // namespace
}  // namespace anchorage::server::testing

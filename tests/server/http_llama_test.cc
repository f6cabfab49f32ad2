// What a llama-server user reaches for, end to end on the tiny model: POST /tokenize and
// /detokenize, GET /props and the context length in /v1/models, --api-key (every route but
// /health needs the bearer key) and --n-predict (a cap a request's max_tokens cannot pass).
#include <gtest/gtest.h>

#include <algorithm>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

Json body_of(const HttpResult& r) {
  return r ? parse_json(r->body) : Json();
}

// A 400 whose error names param.
void expect_bad_field(const HttpResult& r, const std::string& param) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(parse_json(r->body)["error"]["param"], param) << r->body;
}

TEST(HttpLlama, TokenizeAndDetokenizeRoundTrip) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  const std::string text = "Hello, world: caf\xC3\xA9 <|im_end|> done";
  auto r = h.post("/tokenize", Json{{"content", text}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json ids = parse_json(r->body)["tokens"];
  const std::vector<int32_t> want = h.model().tokenizer->encode(text);
  ASSERT_EQ(ids.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ids[i], want[i]) << i;
  // The special token is one id, as llama-server parses specials by default.
  const int32_t im_end = *h.model().tokenizer->token_id("<|im_end|>");
  EXPECT_NE(std::find(want.begin(), want.end(), im_end), want.end());

  // with_pieces: {id, piece}, the pieces spelling the text again.
  r = h.post("/tokenize",
             Json{{"content", text}, {"with_pieces", true}, {"add_special", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string joined;
  const Json pieces = parse_json(r->body)["tokens"];
  ASSERT_EQ(pieces.size(), want.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(pieces[i]["id"], want[i]);
    ASSERT_TRUE(pieces[i]["piece"].is_string()) << pieces[i];
    joined += pieces[i]["piece"].get<std::string>();
  }
  EXPECT_EQ(joined, text);

  r = h.post("/detokenize", Json{{"tokens", ids}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse_json(r->body)["content"], text);
}

TEST(HttpLlama, TokenRoutesNameTheBadField) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  expect_bad_field(h.post("/tokenize", "{}"), "content");
  EXPECT_EQ(body_of(h.post("/detokenize", "{}"))["error"]["code"], "missing_field");
  expect_bad_field(h.post("/tokenize", R"({"content": 5})"), "content");
  expect_bad_field(h.post("/tokenize", R"({"content": "a", "with_pieces": "yes"})"), "with_pieces");
  expect_bad_field(h.post("/tokenize", R"({"content": "a", "add_special": 1})"), "add_special");
  expect_bad_field(h.post("/detokenize", "{}"), "tokens");
  expect_bad_field(h.post("/detokenize", R"({"tokens": "12"})"), "tokens");
  expect_bad_field(h.post("/detokenize", R"({"tokens": [1, -5]})"), "tokens[1]");
  expect_bad_field(h.post("/detokenize", R"({"tokens": [1, 2.5]})"), "tokens[1]");
  expect_bad_field(h.post("/detokenize", R"({"tokens": [99999999]})"), "tokens[0]");
  auto r = h.post("/tokenize", "[1]");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  // A body-less POST is an empty body, refused by the route (not by the transport).
  r = h.client().Post("/detokenize");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
}

TEST(HttpLlama, PropsAndModelsCarryTheContext) {
  ServerOptions o;
  o.default_max_tokens = 321;
  o.max_tokens_cap = 100;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  auto c = h.client();
  Json props = body_of(c.Get("/props"));
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], kTestCapacity) << props;
  EXPECT_EQ(props["default_generation_settings"]["params"]["n_predict"], 100);
  EXPECT_EQ(props["default_generation_settings"]["params"]["max_tokens"], 321);
  EXPECT_EQ(props["total_slots"], 1);
  EXPECT_EQ(props["model_alias"], "anchorage-tiny");
  EXPECT_EQ(props["chat_template"], "qwen3");
  EXPECT_EQ(props["eos_token"], "<|im_end|>");
  Json models = body_of(c.Get("/v1/models"));
  EXPECT_EQ(models["data"][0]["meta"]["n_ctx"], kTestCapacity) << models;
  EXPECT_EQ(models["data"][0]["meta"]["n_vocab"], h.model().vocab_size);
  EXPECT_EQ(body_of(c.Get("/v1/models/anchorage-tiny"))["meta"]["n_ctx"], kTestCapacity);
}

TEST(HttpLlama, ApiKeyGuardsEveryRouteButHealth) {
  ServerOptions o;
  o.api_keys = {{"sk-local-1", ""}, {"sk-local-9", "team"}};
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  auto c = h.client();
  const HttpHeaders good = {{"Authorization", "Bearer sk-local-1"}};
  const HttpHeaders second = {{"Authorization", "Bearer sk-local-9"}};
  const HttpHeaders wrong = {{"Authorization", "Bearer sk-local-2"}};
  const HttpHeaders prefix = {{"Authorization", "Bearer sk-local-"}};
  for (const char* path : {"/v1/models", "/props", "/metrics", "/v1/cache/stats"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << path;
    const Json e = parse_json(r->body)["error"];
    EXPECT_EQ(e["type"], "authentication_error") << path;
    EXPECT_EQ(e["code"], "invalid_api_key") << path;
    for (const auto& h2 : {wrong, prefix}) {
      r = c.Get(path, h2);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 401) << path;
    }
    for (const auto& h2 : {good, second}) {
      r = c.Get(path, h2);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 200) << path;
    }
  }
  const std::string chat = R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})";
  auto r = h.post("/v1/chat/completions", chat);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = h.post("/v1/chat/completions", chat, good);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = h.post("/tokenize", R"({"content": "a"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  // Load balancers probe /health without keys.
  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// The admin token is a key too (a clear cannot send two bearer tokens), and still the only one
// a clear accepts.
TEST(HttpLlama, AdminTokenPassesTheApiKeyCheck) {
  ServerOptions o;
  o.api_keys = {{"sk-user", ""}};
  o.admin_token = "sk-admin";
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const HttpHeaders user = {{"Authorization", "Bearer sk-user"}};
  const HttpHeaders admin = {{"Authorization", "Bearer sk-admin"}};
  auto r = h.client().Get("/v1/models", admin);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = h.post("/v1/cache/clear", "", user);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = h.post("/v1/cache/clear", "", admin);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

// Without an admin token a clear is refused unless the server listens on loopback only; the
// harness listens on 127.0.0.1, so any key holder may clear.
TEST(HttpLlama, ClearWithoutAdminTokenOnLoopback) {
  ServerOptions o;
  o.api_keys = {{"sk-user", ""}};
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  auto r = h.post("/v1/cache/clear", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);  // the key check comes first
  r = h.post("/v1/cache/clear", "", {{"Authorization", "Bearer sk-user"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(HttpLlama, NPredictCapsMaxTokens) {
  ServerOptions o;
  o.max_tokens_cap = 3;
  o.default_max_tokens = 50;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  auto complete = [&](Json body) {
    body["prompt"] = "Once upon a time";
    body["temperature"] = 0;
    auto r = h.post("/v1/completions", body.dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    return body_of(r);
  };
  // A larger max_tokens, and the default, are clamped to the cap...
  for (const Json& body : {Json{{"max_tokens", 40}}, Json::object()}) {
    const Json j = complete(body);
    EXPECT_EQ(j["usage"]["completion_tokens"], 3) << j;
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length") << j;
  }
  // ...a smaller one is kept.
  EXPECT_EQ(complete(Json{{"max_tokens", 2}})["usage"]["completion_tokens"], 2);
}

// Without a cap the same request goes past 3 tokens (so the test above sees the cap, not an
// early stop).
TEST(HttpLlama, WithoutNPredictMaxTokensHolds) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  auto r =
      h.post("/v1/completions",
             Json{{"prompt", "Once upon a time"}, {"temperature", 0}, {"max_tokens", 6}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse_json(r->body)["usage"]["completion_tokens"], 6);
}

// return_progress (llama-server's): a streamed answer carries prompt_progress chunks while its
// prompt is read — before any text, processed rising to the prompt's total — and only when
// asked.
TEST(HttpLlama, ReturnProgressStreamsPromptProgress) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json ids = Json::array();
  for (int i = 0; i < 2500; ++i) ids.push_back(1000 + i % 700);
  Json body = {{"prompt", ids},           {"max_tokens", 2},
               {"temperature", 0},        {"stream", true},
               {"return_progress", true}, {"stream_options", {{"include_usage", true}}}};
  auto streamed = h.post_streamed("/v1/completions", body.dump());
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::vector<Json> progress;
  Json usage;
  bool saw_text = false;
  for (const std::string& data : sse_data(streamed.body)) {
    if (data == "[DONE]") break;
    const Json chunk = parse_json(data);
    if (chunk.contains("prompt_progress")) {
      EXPECT_FALSE(saw_text) << "progress after text";
      EXPECT_EQ(chunk["choices"], Json::array());
      progress.push_back(chunk["prompt_progress"]);
    } else if (!chunk["choices"].empty()) {
      saw_text = true;
    }
    if (chunk.contains("usage") && !chunk["usage"].is_null()) usage = chunk["usage"];
  }
  ASSERT_GE(progress.size(), 2u) << streamed.body;  // 2500 tokens cross an anchor line
  for (size_t i = 0; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i]["total"], 2500);
    EXPECT_EQ(progress[i]["cache"], usage["prompt_tokens_details"]["cached_tokens"]);
    if (i > 0) {
      EXPECT_GT(progress[i]["processed"], progress[i - 1]["processed"]);
    }
  }
  EXPECT_EQ(progress.back()["processed"], usage["prompt_tokens"]);

  // Not asked: no progress chunk; a whole answer ignores the field.
  body["return_progress"] = false;
  streamed = h.post_streamed("/v1/completions", body.dump());
  ASSERT_EQ(streamed.status, 200);
  EXPECT_EQ(streamed.body.find("prompt_progress"), std::string::npos);
  body["return_progress"] = true;
  body["stream"] = false;
  body.erase("stream_options");
  auto r = h.post("/v1/completions", body.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.find("prompt_progress"), std::string::npos);
  expect_bad_field(h.post("/v1/completions", R"({"prompt": "a", "return_progress": 1})"),
                   "return_progress");
}

// A long prefill logs a line per chunk (counts only), so an operator sees it move.
TEST(HttpLlama, LongPrefillLogsEachChunk) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  Json ids = Json::array();
  for (int i = 0; i < 8500; ++i) ids.push_back(1000 + i % 900);
  const Json body = {{"prompt", ids}, {"max_tokens", 1}, {"temperature", 0}};
  core::set_log_level(core::LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  auto r = h.post("/v1/completions", body.dump());
  h.stop();  // the request line is written once the job ends
  const std::string log = ::testing::internal::GetCapturedStderr();
  core::set_log_level(core::LogLevel::kWarn);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  size_t lines = 0;
  for (size_t at = log.find(": prefill "); at != std::string::npos;
       at = log.find(": prefill ", at + 1))
    ++lines;
  EXPECT_GE(lines, 2u) << log;
  EXPECT_NE(log.find(" of 8500 tokens (0 cached)"), std::string::npos) << log;
  EXPECT_NE(log.find("prefill 8500 of 8500 tokens"), std::string::npos) << log;
}

}  // namespace
}  // namespace anchorage::server::testing

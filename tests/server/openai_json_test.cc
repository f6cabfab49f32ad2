// OpenAI JSON shapes (chunks, whole responses, usage, models, errors) and SSE framing.
#include "server/openai_json.h"

#include <gtest/gtest.h>

#include "byte_tokenizer.h"
#include "server/api_error.h"
#include "server/sse.h"

namespace anchorage::server {
namespace {

using testing::byte_tokenizer;

ResponseMeta meta(Endpoint e, bool include_usage = false) {
  ResponseMeta m;
  m.endpoint = e;
  m.id = "chatcmpl-1";
  m.created = 1700000000;
  m.model = "anchorage-tiny";
  m.include_usage = include_usage;
  return m;
}

ChoiceDelta delta_with(const std::string& content, std::vector<int32_t> logprob_tokens = {}) {
  ChoiceDelta d;
  d.content = content;
  for (int32_t t : logprob_tokens) {
    TokenEvent e;
    e.token = t;
    e.logprob = -0.5f;
    e.top = {{t, -0.5f}, {'z', -1.25f}};
    d.logprobs.push_back(e);
  }
  return d;
}

TEST(OpenAiJson, ChatChunks) {
  int64_t offset = 0;
  Json first =
      render_chunk(meta(Endpoint::kChat, true), byte_tokenizer(), ChoiceDelta{}, true, "", &offset);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], (Json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(first.contains("usage") && first["usage"].is_null());

  ChoiceDelta d = delta_with("", {'a'});
  d.reasoning = "think";
  d.tool_calls.push_back({"call_1", "bash", "{}"});
  d.first_tool_index = 2;
  Json j = render_chunk(meta(Endpoint::kChat), byte_tokenizer(), d, false, "tool_calls", &offset);
  const Json& c = j["choices"][0];
  EXPECT_FALSE(c["delta"].contains("content"));
  EXPECT_EQ(c["delta"]["reasoning_content"], "think");
  EXPECT_EQ(c["delta"]["tool_calls"][0],
            (Json{{"index", 2},
                  {"id", "call_1"},
                  {"type", "function"},
                  {"function", {{"name", "bash"}, {"arguments", "{}"}}}}));
  EXPECT_EQ(c["finish_reason"], "tool_calls");
  EXPECT_FALSE(j.contains("usage"));
  const Json& lp = c["logprobs"]["content"][0];
  EXPECT_EQ(lp["token"], "a");
  EXPECT_EQ(lp["logprob"], -0.5);
  EXPECT_EQ(lp["bytes"], Json::array({97}));
  EXPECT_EQ(lp["id"], 97);
  EXPECT_EQ(lp["top_logprobs"][1],
            (Json{{"token", "z"}, {"logprob", -1.25}, {"bytes", {122}}, {"id", 122}}));
}

// Two byte tokens that are not UTF-8 on their own (0xE6 and 0xE7, halves of characters) both
// render as U+FFFD in JSON text; what a client parses must still tell them apart, on both
// routes: by bytes and id in every entry, and by lossless keys in the legacy top_logprobs.
TEST(OpenAiJson, ByteTokensAreNamedExactly) {
  ChoiceDelta d;
  TokenEvent e;
  e.token = 0xE6;
  e.logprob = -0.5f;
  e.top = {{0xE6, -0.5f}, {0xE7, -1.25f}};
  d.logprobs.push_back(e);
  int64_t offset = 0;
  const Json chat = Json::parse(
      dump_json(render_chunk(meta(Endpoint::kChat), byte_tokenizer(), d, false, "", &offset)));
  const Json& c = chat["choices"][0]["logprobs"]["content"][0];
  EXPECT_EQ(c["bytes"], Json::array({0xE6}));
  EXPECT_EQ(c["id"], 0xE6);
  EXPECT_EQ(c["top_logprobs"][0]["bytes"], Json::array({0xE6}));
  EXPECT_EQ(c["top_logprobs"][1]["bytes"], Json::array({0xE7}));
  EXPECT_EQ(c["top_logprobs"][1]["id"], 0xE7);

  offset = 0;
  const Json text = Json::parse(dump_json(
      render_chunk(meta(Endpoint::kCompletion), byte_tokenizer(), d, false, "", &offset)));
  const Json& lp = text["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], Json::array({"bytes:\\xe6"}));
  EXPECT_EQ(lp["top_logprobs"][0], (Json{{"bytes:\\xe6", -0.5}, {"bytes:\\xe7", -1.25}}));
  EXPECT_EQ(lp["text_offset"], Json::array({0}));
  const Json& entry = lp["content"][0];
  EXPECT_EQ(entry["bytes"], Json::array({0xE6}));
  EXPECT_EQ(entry["id"], 0xE6);
  EXPECT_EQ(entry["top_logprobs"][1]["bytes"], Json::array({0xE7}));
  EXPECT_EQ(entry["top_logprobs"][1]["id"], 0xE7);

  EXPECT_EQ(token_spelling("a\xC3\xA9"), "a\xC3\xA9");  // valid UTF-8: the text itself
  EXPECT_EQ(token_spelling(std::string("\xC3", 1)), "bytes:\\xc3");
}

TEST(OpenAiJson, CompletionChunksCarryTextOffsets) {
  int64_t offset = 0;
  Json a = render_chunk(meta(Endpoint::kCompletion), byte_tokenizer(), delta_with("ab", {'a', 'b'}),
                        false, "", &offset);
  Json b = render_chunk(meta(Endpoint::kCompletion), byte_tokenizer(), delta_with("c", {'c'}),
                        false, "length", &offset);
  EXPECT_EQ(a["object"], "text_completion");
  EXPECT_EQ(a["choices"][0]["text"], "ab");
  EXPECT_EQ(a["choices"][0]["logprobs"]["tokens"], Json::array({"a", "b"}));
  EXPECT_EQ(a["choices"][0]["logprobs"]["text_offset"], Json::array({0, 1}));
  EXPECT_EQ(a["choices"][0]["logprobs"]["top_logprobs"][0], (Json{{"a", -0.5}, {"z", -1.25}}));
  EXPECT_EQ(b["choices"][0]["logprobs"]["text_offset"], Json::array({2}));
  EXPECT_EQ(b["choices"][0]["finish_reason"], "length");
}

TEST(OpenAiJson, WholeResponsesAndUsage) {
  JobOutcome o;
  o.end = JobEnd::kStopToken;
  o.prompt_tokens = 10;
  o.completion_tokens = 3;
  o.reread_tokens = 10;
  SessionKey s{SessionKey::Source::kHeader, "ses_1", ""};
  Json usage = render_usage(o, s);
  EXPECT_EQ(usage["prompt_tokens"], 10);
  EXPECT_EQ(usage["completion_tokens"], 3);
  EXPECT_EQ(usage["total_tokens"], 13);
  EXPECT_EQ(usage["prompt_tokens_details"], (Json{{"cached_tokens", 0}}));
  EXPECT_EQ(usage["anchorage"]["cache"], (Json{{"tier", "none"},
                                               {"source", "cold"},
                                               {"cached", 0},
                                               {"reread", 10},
                                               {"exact", true},
                                               {"served", "client"},
                                               {"aligned", "none"},
                                               {"hidden", 0}}));
  EXPECT_EQ(usage["anchorage"]["session"], "header");
  EXPECT_EQ(dump_json(usage).find("ses_1"), std::string::npos);  // the key is never echoed

  ChoiceDelta c;
  c.tool_calls.push_back({"call_1", "read", "{\"a\": 1}"});
  Json r = render_response(meta(Endpoint::kChat), byte_tokenizer(), c, false,
                           finish_reason(o.end, true), usage);
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_TRUE(r["choices"][0]["message"]["content"].is_null());
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "read");
  EXPECT_FALSE(r["choices"][0]["message"]["tool_calls"][0].contains("index"));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_TRUE(r["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(r["usage"], usage);

  Json chunk = render_usage_chunk(meta(Endpoint::kChat, true), usage);
  EXPECT_EQ(chunk["choices"], Json::array());
  EXPECT_EQ(chunk["usage"], usage);

  EXPECT_EQ(finish_reason(JobEnd::kLength, true), "length");
  EXPECT_EQ(finish_reason(JobEnd::kStopString, false), "stop");
}

TEST(OpenAiJson, ModelsAndErrors) {
  Json m = render_models("anchorage-tiny", 5, {2048, 151936});
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0], (Json{{"id", "anchorage-tiny"},
                                {"object", "model"},
                                {"created", 5},
                                {"owned_by", "anchorage"},
                                {"meta", {{"n_ctx", 2048}, {"n_vocab", 151936}}}}));
  Json e = Json::parse(render_error_body(field_error("messages[0].role", "unknown role")));
  EXPECT_EQ(e, (Json{{"error",
                      {{"message", "messages[0].role: unknown role"},
                       {"type", "invalid_request_error"},
                       {"param", "messages[0].role"},
                       {"code", "invalid_value"}}}}));
  e = Json::parse(render_error_body(queue_full_error()));
  EXPECT_TRUE(e["error"]["param"].is_null());
  EXPECT_EQ(error_from_status(core::Status::invalid_argument("messages[2].tool_calls[0]: bad"),
                              "messages")
                .param,
            "messages[2].tool_calls[0]");
  EXPECT_EQ(error_from_status(core::Status::invalid_argument("no field here"), "messages").param,
            "messages");
}

TEST(OpenAiJson, InvalidUtf8IsReplacedNotThrown) {
  Json j = Json::object();
  j["token"] = std::string("\xe2\x82");  // half a character: a byte token's text
  EXPECT_EQ(dump_json(j), "{\"token\":\"\xef\xbf\xbd\"}");
}

TEST(Sse, Framing) {
  EXPECT_EQ(sse_event("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
  EXPECT_EQ(kSsePing.substr(0, 1), ":");
  // Newlines inside strings are escaped by the JSON writer, so one line holds a chunk.
  Json j = Json::object();
  j["content"] = "a\nb\r\n";
  EXPECT_EQ(dump_json(j).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace anchorage::server

// The request parser: every field's type and range, the error's param naming the field, and
// the opencode trace bodies (tests/corpus/chat_requests/) parsing cleanly.
#include "server/request_parser.h"

#include "server/json_fields.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace anchorage::server {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

constexpr const char* kMessages = R"("messages":[{"role":"user","content":"hi"}])";

std::string chat(const std::string& extra) {
  return std::string("{") + kMessages + (extra.empty() ? "" : "," + extra) + "}";
}

// Parses a chat body and returns its error (fails the test if there is none).
ApiError chat_error(const std::string& body) {
  CompletionRequest r;
  auto e = parse_chat_body(body, std::nullopt, &r);
  EXPECT_TRUE(e.has_value()) << "accepted: " << body;
  return e.value_or(ApiError{});
}

ApiError completion_error(const std::string& body) {
  CompletionRequest r;
  auto e = parse_completion_body(body, std::nullopt, &r);
  EXPECT_TRUE(e.has_value()) << "accepted: " << body;
  return e.value_or(ApiError{});
}

CompletionRequest chat_ok(const std::string& body, std::optional<std::string_view> header = {}) {
  CompletionRequest r;
  auto e = parse_chat_body(body, header, &r);
  EXPECT_FALSE(e.has_value()) << e->message;
  return r;
}

TEST(RequestParser, MalformedBodies) {
  for (const char* body : {"", "{", "nope", "{\"messages\": [}", "{\"a\":1}x", "\xff\xfe"}) {
    const ApiError e = chat_error(body);
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.code, "invalid_json") << body;
  }
  EXPECT_EQ(chat_error("[1,2]").code, "invalid_type");
  EXPECT_EQ(chat_error("\"text\"").code, "invalid_type");
  // Invalid UTF-8 inside a string is malformed JSON too.
  EXPECT_EQ(chat_error(std::string("{\"model\":\"\xc3\x28\"}")).code, "invalid_json");
}

TEST(RequestParser, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(chat_error(deep).code, "invalid_json");
  EXPECT_TRUE(nesting_exceeds("{\"a\":" + std::string(200, '[') + "}", 128));
  // Brackets inside strings do not count.
  EXPECT_FALSE(nesting_exceeds("{\"a\":\"" + std::string(200, '[') + "\\\"[\"}", 4));
}

TEST(RequestParser, MessageErrorsNameTheField) {
  EXPECT_EQ(chat_error("{}").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages": "hi"})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages": []})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "wizard", "content": "x"}]})").param,
            "messages[0].role");
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "user", "content": "a"},
                                        {"role": "user", "content": 5}]})")
                .param,
            "messages[1].content");
  EXPECT_EQ(chat_error(R"({"messages": [{"content": "x"}]})").param, "messages[0].role");
}

TEST(RequestParser, TypesAndRanges) {
  struct Case {
    const char* extra;
    const char* param;
  };
  const Case cases[] = {
      {R"("max_tokens": -1)", "max_tokens"},
      {R"("max_tokens": "10")", "max_tokens"},
      {R"("max_tokens": 2.5)", "max_tokens"},
      {R"("max_completion_tokens": -5)", "max_completion_tokens"},
      {R"("temperature": "hot")", "temperature"},
      {R"("temperature": -0.1)", "temperature"},
      {R"("temperature": 2.5)", "temperature"},
      {R"("top_p": 0)", "top_p"},
      {R"("top_p": 1.5)", "top_p"},
      {R"("top_k": -2)", "top_k"},
      {R"("min_p": 2)", "min_p"},
      {R"("seed": "x")", "seed"},
      {R"("seed": 1e30)", "seed"},
      {R"("stream": 1)", "stream"},
      {R"("stream_options": 3)", "stream_options"},
      {R"("stream_options": {"include_usage": "yes"})", "stream_options.include_usage"},
      {R"("n": 2)", "n"},
      {R"("n": "1")", "n"},
      {R"("logprobs": 1)", "logprobs"},
      {R"("top_logprobs": 2)", "top_logprobs"},  // without logprobs: true
      {R"("logprobs": true, "top_logprobs": 21)", "top_logprobs"},
      {R"("stop": 5)", "stop"},
      {R"("stop": ["a", 5])", "stop[1]"},
      {R"("stop": [""])", "stop[0]"},
      {R"("model": 3)", "model"},
      {R"("response_format": {"type": "json_object"})", "response_format"},
      {R"("tool_choice": "sometimes")", "tool_choice"},
      {R"("tool_choice": "required")", "tool_choice"},  // no tools
      {R"("tool_choice": {"type": "function", "function": {"name": "x"}})",
       "tool_choice.function.name"},
      {R"("reasoning_effort": "extreme")", "reasoning_effort"},
      {R"("chat_template_kwargs": {"enable_thinking": "no"})",
       "chat_template_kwargs.enable_thinking"},
      {R"("tools": {"a": 1})", "tools"},
      {R"("prompt_cache_key": 42)", "prompt_cache_key"},
      {R"("tool_choice": 5)", "tool_choice"},
      {R"("tools": [{"type": "function", "function": {"parameters": {}}}])",
       "tools[0].function.name"},
      {R"("tools": [{"type": "function", "function": {"name": ""}}])", "tools[0].function.name"},
      {R"("tools": [{"type": "retrieval", "function": {"name": "f"}}])", "tools[0].type"},
      {R"("tools": [{"function": {"name": "f"}}])", "tools[0].type"},
      {R"("tools": [{"type": "function", "function": {"name": "f", "parameters": 3}}])",
       "tools[0].function.parameters"},
      {R"("tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}])",
       "tools[0].function.parameters"},
  };
  for (const Case& c : cases) {
    const ApiError e = chat_error(chat(c.extra));
    EXPECT_EQ(e.http_status, 400) << c.extra;
    EXPECT_EQ(e.param, c.param) << c.extra;
    EXPECT_EQ(e.type, "invalid_request_error") << c.extra;
    EXPECT_EQ(e.message.rfind(std::string(c.param) + ": ", 0), 0u) << e.message;
  }
}

TEST(RequestParser, AcceptedValues) {
  CompletionRequest r = chat_ok(chat(
      R"("max_tokens": 7, "max_completion_tokens": 9, "temperature": 0.5, "top_p": 0.9,
         "top_k": -1, "min_p": 0.1, "seed": -3, "stop": "END", "n": 1, "stream": true,
         "stream_options": {"include_usage": true}, "logprobs": true, "top_logprobs": 3,
         "response_format": {"type": "text"}, "frequency_penalty": 0, "user": "u1",
         "temperature_unknown_extension": [1, 2])"));
  EXPECT_EQ(r.max_tokens, 9);  // max_completion_tokens wins
  EXPECT_EQ(r.sampling.temperature, 0.5);
  EXPECT_EQ(r.sampling.top_p, 0.9);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_EQ(r.sampling.min_p, 0.1);
  EXPECT_TRUE(r.has_seed);
  EXPECT_EQ(r.sampling.seed, uint64_t(int64_t(-3)));
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_TRUE(r.session.empty());  // `user` is not a session key

  // Defaults: OpenAI's temperature 1, no max_tokens, nulls are "unset".
  r = chat_ok(chat(R"("max_tokens": null, "temperature": null, "stop": null, "n": null)"));
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.sampling.temperature, 1.0);
  EXPECT_FALSE(r.has_seed);
  EXPECT_EQ(r.max_tokens, std::nullopt);
  r = chat_ok(chat(R"("max_tokens": 0, "stop": ["a", "b"], "temperature": 2.0)"));
  EXPECT_EQ(r.max_tokens, 0);
  EXPECT_EQ(r.stop.size(), 2u);
}

TEST(RequestParser, ToolsAndThinking) {
  const std::string tools =
      R"("tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}])";
  CompletionRequest r = chat_ok(chat(tools));
  EXPECT_TRUE(r.parse_tool_calls);
  EXPECT_EQ(r.chat.tools.size(), 1u);
  r = chat_ok(chat(tools + R"(, "tool_choice": "none")"));
  EXPECT_FALSE(r.parse_tool_calls);
  r = chat_ok(
      chat(tools + R"(, "tool_choice": {"type": "function", "function": {"name": "bash"}})"));
  EXPECT_TRUE(r.parse_tool_calls);
  r = chat_ok(chat(tools + R"(, "tool_choice": "required")"));
  EXPECT_TRUE(r.parse_tool_calls);
  EXPECT_FALSE(chat_ok(chat("")).parse_tool_calls);

  EXPECT_TRUE(chat_ok(chat("")).chat.enable_thinking);
  EXPECT_TRUE(chat_ok(chat(R"("reasoning_effort": "low")")).chat.enable_thinking);
  EXPECT_FALSE(chat_ok(chat(R"("reasoning_effort": "none")")).chat.enable_thinking);
  EXPECT_FALSE(
      chat_ok(chat(R"("chat_template_kwargs": {"enable_thinking": false})")).chat.enable_thinking);
  // The template argument wins over reasoning_effort.
  EXPECT_TRUE(chat_ok(chat(R"("reasoning_effort": "none",
                              "chat_template_kwargs": {"enable_thinking": true})"))
                  .chat.enable_thinking);
}

TEST(RequestParser, SessionKey) {
  CompletionRequest r = chat_ok(chat(R"("prompt_cache_key": "conv-1")"), "ses_header");
  EXPECT_EQ(r.session.source, SessionKey::Source::kBody);
  EXPECT_EQ(r.session.id, "conv-1");
  r = chat_ok(chat(""), "ses_header");
  EXPECT_EQ(r.session.source, SessionKey::Source::kHeader);
  EXPECT_EQ(r.session.id, "ses_header");
  r = chat_ok(chat(""));
  EXPECT_TRUE(r.session.empty());
  EXPECT_NE(SessionKey({SessionKey::Source::kBody, "a", ""}).hash(),
            SessionKey({SessionKey::Source::kBody, "b", ""}).hash());

  CompletionRequest bad;
  auto e = parse_chat_body(chat(""), std::string(300, 'x'), &bad);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "x-session-id");
  // An empty key is no key, in the body as in the header (one rule for both).
  r = chat_ok(chat(""), "");
  EXPECT_TRUE(r.session.empty());
  r = chat_ok(chat(R"("prompt_cache_key": "")"));
  EXPECT_TRUE(r.session.empty());
  r = chat_ok(chat(R"("prompt_cache_key": "")"), "ses_header");
  EXPECT_EQ(r.session.source, SessionKey::Source::kHeader);
}

// A value of the wrong JSON type answers invalid_type (as docs/http-api.md says), whether the
// field is read here or by the chat parser; an out-of-range value answers invalid_value.
TEST(RequestParser, WrongTypesAnswerInvalidType) {
  for (const char* extra :
       {R"("temperature": "hot")", R"("stream": 1)", R"("tool_choice": 5)", R"("tools": {"a": 1})",
        R"("chat_template_kwargs": {"enable_thinking": "no"})", R"("stop": 5)"}) {
    EXPECT_EQ(chat_error(chat(extra)).code, "invalid_type") << extra;
  }
  EXPECT_EQ(chat_error(R"({"messages": [{"role": 3, "content": "x"}]})").code, "invalid_type");
  EXPECT_EQ(chat_error(R"({"messages": 3})").code, "invalid_type");
  EXPECT_EQ(chat_error(chat(R"("temperature": 9)")).code, "invalid_value");
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "wizard", "content": "x"}]})").code,
            "invalid_value");
}

// The code comes from the status's reason, which the chat parser sets, not from the wording
// of its message: a wrong-type message without the reason is invalid_value, and a message
// worded otherwise with it is invalid_type.
TEST(RequestParser, ErrorCodeComesFromTheReasonNotTheText) {
  const ApiError worded =
      error_from_status(core::Status::invalid_argument("messages: must be a string"), "messages");
  EXPECT_EQ(worded.code, "invalid_value");
  const ApiError typed = error_from_status(
      core::Status::invalid_argument(core::Reason::kWrongType, "messages: not text"), "messages");
  EXPECT_EQ(typed.code, "invalid_type");
  EXPECT_EQ(typed.param, "messages");
}

TEST(RequestParser, CompletionPrompts) {
  CompletionRequest r;
  ASSERT_FALSE(parse_completion_body(R"({"prompt": "hello"})", std::nullopt, &r));
  EXPECT_EQ(r.prompt_text, "hello");
  EXPECT_FALSE(r.prompt_is_ids);
  ASSERT_FALSE(parse_completion_body(R"({"prompt": [1, 2, 3]})", std::nullopt, &r));
  EXPECT_TRUE(r.prompt_is_ids);
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  ASSERT_FALSE(parse_completion_body(R"({"prompt": [[4, 5]]})", std::nullopt, &r));
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{4, 5}));
  ASSERT_FALSE(parse_completion_body(R"({"prompt": ["one"], "logprobs": 2})", std::nullopt, &r));
  EXPECT_EQ(r.prompt_text, "one");
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 2);

  EXPECT_EQ(completion_error("{}").param, "prompt");
  EXPECT_EQ(completion_error(R"({"prompt": 5})").param, "prompt");
  EXPECT_EQ(completion_error(R"({"prompt": [1, -2]})").param, "prompt[1]");
  EXPECT_EQ(completion_error(R"({"prompt": [1, "a"]})").param, "prompt[1]");
  EXPECT_EQ(completion_error(R"({"prompt": [1, 99999999999]})").param, "prompt[1]");
  EXPECT_EQ(completion_error(R"({"prompt": ["a", "b"]})").param, "prompt[0]");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "echo": true})").param, "echo");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "best_of": 3})").param, "best_of");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "suffix": "z"})").param, "suffix");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "logprobs": true})").param, "logprobs");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "logprobs": 21})").param, "logprobs");
  EXPECT_EQ(completion_error(R"({"prompt": "a", "n": 3})").param, "n");
}

TEST(RequestParser, EveryTraceBodyParses) {
  const auto dir = std::filesystem::path(ANCHORAGE_SOURCE_DIR) / "tests/corpus/chat_requests";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CompletionRequest r;
    auto e = parse_chat_body(read_file(entry.path()), "ses_trace", &r);
    EXPECT_FALSE(e.has_value()) << entry.path() << ": " << e->message;
    EXPECT_TRUE(r.stream);
    EXPECT_TRUE(r.include_usage);
    EXPECT_EQ(r.max_tokens, 4096);
    ++n;
  }
  EXPECT_EQ(n, 16);
}

}  // namespace
}  // namespace anchorage::server

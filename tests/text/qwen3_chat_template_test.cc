// The native Qwen3 template against the real one: tests/text/golden/qwen3_template_golden.jsonl
// holds requests and Jinja2's renders of them (made by gen_template_golden.py: the 16 opencode
// trace bodies plus made-up conversations). Every render must match byte for byte. Failures
// report the case name and the first differing offset, never the text.
#include "text/qwen3_chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace anchorage::text {
namespace {

using Json = nlohmann::ordered_json;

struct GoldenCase {
  std::string name;
  std::string request;
  bool parse_tool_arguments = false;
  std::string render;
};

struct Golden {
  std::string template_text;
  std::vector<GoldenCase> cases;
};

std::filesystem::path golden_path() {
  return std::filesystem::path(__FILE__).parent_path() / "golden" / "qwen3_template_golden.jsonl";
}

Golden load_golden() {
  Golden g;
  std::ifstream in(golden_path(), std::ios::binary);
  EXPECT_TRUE(in.good()) << golden_path();
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    const Json row = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(row.is_object());
    if (!row.is_object()) continue;
    if (header) {
      g.template_text = row.value("template", "");
      header = false;
      continue;
    }
    GoldenCase c;
    c.name = row.value("name", "");
    c.request = row.value("request", "");
    c.parse_tool_arguments = row["options"].value("parse_tool_arguments", false);
    c.render = row.value("render", "");
    g.cases.push_back(std::move(c));
  }
  return g;
}

const Golden& golden() {
  static const Golden g = load_golden();
  return g;
}

size_t first_difference(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return i;
  }
  return n;
}

TEST(Qwen3ChatTemplate, GoldenTemplateIsTheImplementedOne) {
  ASSERT_FALSE(golden().template_text.empty());
  EXPECT_TRUE(is_qwen3_chat_template(golden().template_text));
  EXPECT_FALSE(is_qwen3_chat_template(golden().template_text + " "));
}

TEST(Qwen3ChatTemplate, GoldenCoversTracesAndEnoughConversations) {
  const auto& cases = golden().cases;
  EXPECT_GE(cases.size(), 50u);
  const auto traces = std::count_if(cases.begin(), cases.end(), [](const GoldenCase& c) {
    return c.name.rfind("trace_seq", 0) == 0;
  });
  EXPECT_EQ(traces, 16);
}

TEST(Qwen3ChatTemplate, MatchesJinja2ByteForByte) {
  size_t checked = 0;
  for (const GoldenCase& c : golden().cases) {
    const Json body = Json::parse(c.request, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(body.is_discarded()) << c.name;
    ChatRequestOptions options;
    options.parse_tool_arguments = c.parse_tool_arguments;
    const auto got = render_qwen3_chat(body, options);
    ASSERT_TRUE(got.has_value()) << c.name << ": " << got.error().to_string();
    const bool same = got->size() == c.render.size() &&
                      std::memcmp(got->data(), c.render.data(), c.render.size()) == 0;
    EXPECT_TRUE(same) << c.name << ": got " << got->size() << " bytes, want " << c.render.size()
                      << ", first difference at byte " << first_difference(*got, c.render);
    ++checked;
  }
  EXPECT_EQ(checked, golden().cases.size());
}

// The opencode traces: a request's render is a prefix of the next one inside a tool loop (the
// property the prompt caches rely on, see ../shared/traces/README.md).
TEST(Qwen3ChatTemplate, TraceToolLoopRendersExtendEachOther) {
  std::vector<std::string> renders;
  for (const GoldenCase& c : golden().cases) {
    if (c.name == "trace_seq02" || c.name == "trace_seq03" || c.name == "trace_seq04") {
      auto r = render_qwen3_chat(Json::parse(c.request, nullptr, false));
      ASSERT_TRUE(r.has_value());
      renders.push_back(*r);
    }
  }
  ASSERT_EQ(renders.size(), 3u);
  EXPECT_EQ(renders[1].compare(0, renders[0].size(), renders[0]), 0);
  EXPECT_EQ(renders[2].compare(0, renders[1].size(), renders[1]), 0);
}

std::string render_or_error(const char* json_text, std::string* error) {
  const Json body = Json::parse(json_text, nullptr, false);
  EXPECT_FALSE(body.is_discarded()) << json_text;
  auto r = render_qwen3_chat(body);
  if (r.has_value()) return *r;
  EXPECT_EQ(r.error().code(), core::StatusCode::kInvalidArgument);
  *error = r.error().message();
  return "";
}

// Each malformed request must fail with InvalidArgument whose message starts with the field.
TEST(Qwen3ChatTemplate, MalformedRequestsNameTheField) {
  struct Case {
    const char* body;
    const char* field;
  };
  const Case cases[] = {
      {R"([])", "request"},
      {R"({})", "messages"},
      {R"({"messages": {}})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": ["hi"]})", "messages[0]"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": 3}]})", "messages[0].role"},
      {R"({"messages": [{"role":"user","content":"a"},{"role":"user","content":"b"},
          {"role":"assistant","content":"c"},{"role":"developer","content":"d"}]})",
       "messages[3].role"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, "b"]}]})",
       "messages[0].content[1]"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
       "messages[0].content[0].text"},
      {R"({"messages": [{"role": "assistant", "reasoning_content": 1}]})",
       "messages[0].reasoning_content"},
      {R"({"messages": [{"role": "assistant", "tool_calls": {}}]})", "messages[0].tool_calls"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [1]}]})", "messages[0].tool_calls[0]"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]})",
       "messages[0].tool_calls[0].function"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]})",
       "messages[0].tool_calls[0].function.name"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]})",
       "messages[0].tool_calls[0].function.arguments"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"arguments": "{}"}]}]})",
       "messages[0].tool_calls[0].name"},
      {R"({"messages": [{"role": "user"}], "tools": {}})", "tools"},
      {R"({"messages": [{"role": "user"}], "tools": [{"type": "function"}, "x"]})", "tools[1]"},
      {R"({"messages": [{"role": "user"}], "add_generation_prompt": "yes"})",
       "add_generation_prompt"},
      {R"({"messages": [{"role": "user"}], "chat_template_kwargs": []})", "chat_template_kwargs"},
      {R"({"messages": [{"role": "user"}], "chat_template_kwargs": {"enable_thinking": "false"}})",
       "chat_template_kwargs.enable_thinking"},
  };
  for (const Case& c : cases) {
    std::string error;
    const std::string out = render_or_error(c.body, &error);
    EXPECT_TRUE(out.empty()) << c.field;
    EXPECT_EQ(error.rfind(std::string(c.field) + ":", 0), 0u)
        << "want field " << c.field << ", got message " << error;
  }
}

std::string nested_arrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

TEST(Qwen3ChatTemplate, DeepJsonIsRejectedNotRecursedInto) {
  const std::string deep = nested_arrays(kMaxJsonDepth + 1);
  const std::string ok = nested_arrays(kMaxJsonDepth - 1);
  auto with_tool = [](const std::string& value) {
    return Json::parse(R"({"messages":[{"role":"user","content":"q"}],"tools":[{"x":)" + value +
                       "}]}");
  };
  auto r = render_qwen3_chat(with_tool(deep));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message().rfind("tools[0]:", 0), 0u);
  EXPECT_TRUE(render_qwen3_chat(with_tool(ok)).has_value());

  auto args = Json::parse(
      R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":)" +
      deep + "}}]}]}");
  auto ra = render_qwen3_chat(args);
  ASSERT_FALSE(ra.has_value());
  EXPECT_EQ(ra.error().message().rfind("messages[0].tool_calls[0].function.arguments:", 0), 0u);
}

TEST(Qwen3ChatTemplate, ErrorMessagesNeverCarryUserText) {
  std::string error;
  render_or_error(R"({"messages": [{"role": "secret-role-text", "content": "secret"}]})", &error);
  EXPECT_EQ(error.find("secret"), std::string::npos);
}

// A tiny end-to-end check that does not depend on the golden file being present.
TEST(Qwen3ChatTemplate, RendersASimpleConversation) {
  const auto r = render_qwen3_chat(Json::parse(
      R"({"messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"}],
          "chat_template_kwargs":{"enable_thinking":false}})"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(Qwen3ChatTemplate, ParseToolArgumentsRedumpsTheClientsCompactJson) {
  const char* body = R"({"messages":[{"role":"user","content":"q"},{"role":"assistant",
      "content":"","tool_calls":[{"function":{"name":"bash","arguments":"{\"command\":\"ls -la\"}"}}]}]})";
  ChatRequestOptions parse;
  parse.parse_tool_arguments = true;
  const auto verbatim = render_qwen3_chat(Json::parse(body));
  const auto redumped = render_qwen3_chat(Json::parse(body), parse);
  ASSERT_TRUE(verbatim.has_value() && redumped.has_value());
  EXPECT_NE(verbatim->find(R"("arguments": {"command":"ls -la"}})"), std::string::npos);
  EXPECT_NE(redumped->find(R"("arguments": {"command": "ls -la"}})"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::text

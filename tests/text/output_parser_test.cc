// OutputParser: one-shot results for each rule, then the streaming property: however the text
// is split into pieces (every single split point, every pair of split points for short texts,
// byte by byte), the concatenated events equal the one-shot result. Finally the round trip
// with the template: prompt + generated text == the template's render of the parsed turn.
#include "text/output_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "text/qwen3_chat_template.h"
#include "text/tool_call_id.h"

namespace anchorage::text {
namespace {

struct Expected {
  Expected(std::string r, std::string c, std::vector<std::pair<std::string, std::string>> k = {})
      : reasoning(std::move(r)), content(std::move(c)), calls(std::move(k)) {}
  std::string reasoning;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
};

struct Case {
  Case(const char* n, std::string t, Expected w, OutputParserOptions o = {})
      : name(n), text(std::move(t)), want(std::move(w)), options(std::move(o)) {}
  const char* name;
  std::string text;
  Expected want;
  OutputParserOptions options;
};

OutputParserOptions no_reasoning() {
  OutputParserOptions o;
  o.parse_reasoning = false;
  return o;
}

OutputParserOptions opened_reasoning() {
  OutputParserOptions o;
  o.starts_in_reasoning = true;
  return o;
}

OutputParserOptions no_tools() {
  OutputParserOptions o;
  o.parse_tool_calls = false;
  return o;
}

const std::string kLs = R"({"name": "bash", "arguments": {"command": "ls -la"}})";
const std::string kRead = R"({"name": "read", "arguments": {"filePath": "/tmp/a", "limit": 5}})";

std::vector<Case> cases() {
  return {
      {"think_then_content", "<think>\nR line\n</think>\n\nThe answer.", {"R line", "The answer."}},
      {"content_only", "Just text.\n", {"", "Just text.\n"}},
      {"leading_whitespace_before_think", " \n<think>R</think>C", {"R", "C"}},
      {"unclosed_think_is_reasoning", "<think>\nstill thinking\n\n", {"still thinking", ""}},
      {"empty_think", "<think>\n\n</think>\n\nC", {"", "C"}},
      {"immediately_closed_think", "<think></think>C", {"", "C"}},
      {"inner_newlines_kept", "<think>\n\na\n\nb\n\n</think>\n\n\nc\n", {"a\n\nb", "c\n"}},
      {"later_think_is_content", "C <think>x</think> d", {"", "C <think>x</think> d"}},
      {"think_prefix_then_other", "<thinking>x", {"", "<thinking>x"}},
      {"partial_think_only", "<thi", {"", "<thi"}},
      {"whitespace_only", "\n \n", {"", "\n \n"}},
      {"empty", "", {"", ""}},
      {"close_without_open_is_content", "R</think>C", {"", "R</think>C"}},
      {"starts_in_reasoning", "\nR\n</think>\n\nC", {"R", "C"}, opened_reasoning()},
      {"starts_in_reasoning_unclosed", "R", {"R", ""}, opened_reasoning()},
      {"reasoning_off", "<think>R</think>C", {"", "<think>R</think>C"}, no_reasoning()},
      {"reasoning_keeps_tool_tags",
       "<think><tool_call>" + kLs + "</tool_call></think>x",
       {"<tool_call>" + kLs + "</tool_call>", "x"}},
      {"tool_call_after_think",
       "<think>\nr\n</think>\n\nLet me list.\n<tool_call>\n" + kLs + "\n</tool_call>",
       {"r", "Let me list.", {{"bash", R"({"command": "ls -la"})"}}}},
      {"tool_call_only",
       "<tool_call>\n" + kLs + "\n</tool_call>",
       {"", "", {{"bash", R"({"command": "ls -la"})"}}}},
      {"two_tool_calls",
       "<tool_call>\n" + kLs + "\n</tool_call>\n<tool_call>\n" + kRead + "\n</tool_call>\n",
       {"",
        "",
        {{"bash", R"({"command": "ls -la"})"}, {"read", R"({"filePath": "/tmp/a", "limit": 5})"}}}},
      {"double_newline_before_call_keeps_one",
       "A\n\n<tool_call>" + kLs + "</tool_call>",
       {"", "A\n", {{"bash", R"({"command": "ls -la"})"}}}},
      {"text_after_call_kept",
       "A\n<tool_call>" + kLs + "</tool_call>\nDone.",
       {"", "A\nDone.", {{"bash", R"({"command": "ls -la"})"}}}},
      {"compact_arguments_reprinted",
       R"(<tool_call>{"name":"f","arguments":{"b":[1,2.50],"a":"é"}}</tool_call>)",
       {"", "", {{"f", R"({"b": [1, 2.5], "a": "é"})"}}}},
      {"string_arguments_verbatim",
       R"(<tool_call>{"name":"f","arguments":"{\"x\":1}"}</tool_call>)",
       {"", "", {{"f", R"({"x":1})"}}}},
      {"missing_arguments", R"(<tool_call>{"name": "f"}</tool_call>)", {"", "", {{"f", "{}"}}}},
      {"malformed_json_stays_text",
       "A\n<tool_call>\n{\"name\": \"f\", \"arguments\": {oops}\n</tool_call>B",
       {"", "A\n<tool_call>\n{\"name\": \"f\", \"arguments\": {oops}\n</tool_call>B"}},
      {"missing_name_stays_text",
       "<tool_call>{\"arguments\": {}}</tool_call>",
       {"", "<tool_call>{\"arguments\": {}}</tool_call>"}},
      {"empty_name_stays_text",
       "<tool_call>{\"name\": \"\"}</tool_call>",
       {"", "<tool_call>{\"name\": \"\"}</tool_call>"}},
      {"array_body_stays_text", "<tool_call>[1]</tool_call>", {"", "<tool_call>[1]</tool_call>"}},
      {"unclosed_call_stays_text",
       "A\n<tool_call>\n{\"name\": \"f\"",
       {"", "A\n<tool_call>\n{\"name\": \"f\""}},
      {"malformed_then_valid",
       "<tool_call>nope</tool_call>\n<tool_call>" + kLs + "</tool_call>",
       {"", "<tool_call>nope</tool_call>", {{"bash", R"({"command": "ls -la"})"}}}},
      {"valid_then_malformed",
       "<tool_call>" + kLs + "</tool_call>\n<tool_call>nope</tool_call>",
       {"", "\n<tool_call>nope</tool_call>", {{"bash", R"({"command": "ls -la"})"}}}},
      {"nested_open_tag_is_malformed",
       "<tool_call>{<tool_call>" + kLs + "</tool_call>",
       {"", "<tool_call>{<tool_call>" + kLs + "</tool_call>"}},
      {"partial_open_tag_at_end", "A\n<tool_c", {"", "A\n<tool_c"}},
      {"partial_open_tag_after_call",
       "<tool_call>" + kLs + "</tool_call>\n<tool_c",
       {"", "\n<tool_c", {{"bash", R"({"command": "ls -la"})"}}}},
      {"tools_off",
       "<tool_call>" + kLs + "</tool_call>",
       {"", "<tool_call>" + kLs + "</tool_call>"},
       no_tools()},
      {"unicode_everywhere",
       "<think>思考 🤔\n</think>\n\n答案 ✓\n<tool_call>{\"name\": \"é\", \"arguments\": "
       "{\"q\": "
       "\"日本\"}}</tool_call>",
       {"思考 🤔", "答案 ✓", {{"é", R"({"q": "日本"})"}}}},
  };
}

struct Collected {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> calls;
  bool reasoning_after_other = false;  // a reasoning event after content or a call
};

void collect(const std::vector<OutputEvent>& events, Collected* out) {
  for (const OutputEvent& e : events) {
    switch (e.kind) {
      case OutputEventKind::kReasoning:
        if (!out->content.empty() || !out->calls.empty()) out->reasoning_after_other = true;
        out->reasoning += e.text;
        break;
      case OutputEventKind::kContent:
        out->content += e.text;
        break;
      case OutputEventKind::kToolCall:
        EXPECT_EQ(e.tool_call_index, out->calls.size());
        out->calls.push_back(e.tool_call);
        break;
    }
  }
}

Collected run_pieces(const std::string& text, const std::vector<size_t>& cuts,
                     const OutputParserOptions& options) {
  OutputParser parser(options);
  std::vector<OutputEvent> events;
  Collected got;
  size_t from = 0;
  for (size_t cut : cuts) {
    parser.feed(std::string_view(text).substr(from, cut - from), &events);
    collect(events, &got);
    events.clear();
    from = cut;
  }
  parser.feed(std::string_view(text).substr(from), &events);
  parser.finish(&events);
  collect(events, &got);
  return got;
}

void expect_matches(const Collected& got, const Expected& want, const std::string& where) {
  EXPECT_EQ(got.reasoning, want.reasoning) << where;
  EXPECT_EQ(got.content, want.content) << where;
  EXPECT_FALSE(got.reasoning_after_other) << where;
  ASSERT_EQ(got.calls.size(), want.calls.size()) << where;
  for (size_t i = 0; i < got.calls.size(); ++i) {
    EXPECT_EQ(got.calls[i].name, want.calls[i].first) << where;
    EXPECT_EQ(got.calls[i].arguments, want.calls[i].second) << where;
    EXPECT_EQ(got.calls[i].id, make_tool_call_id(0, i)) << where;
  }
}

TEST(OutputParser, OneShot) {
  for (const Case& c : cases()) {
    const ParsedOutput p = parse_output(c.text, c.options);
    Collected got{p.reasoning_content, p.content, p.tool_calls, false};
    expect_matches(got, c.want, c.name);
  }
}

TEST(OutputParser, EverySingleSplitPoint) {
  for (const Case& c : cases()) {
    for (size_t cut = 0; cut <= c.text.size(); ++cut) {
      expect_matches(run_pieces(c.text, {cut}, c.options), c.want,
                     std::string(c.name) + " cut " + std::to_string(cut));
    }
  }
}

TEST(OutputParser, EveryPairOfSplitPoints) {
  for (const Case& c : cases()) {
    if (c.text.size() > 90) continue;  // quadratic; the long cases get the other splits
    for (size_t a = 0; a <= c.text.size(); ++a) {
      for (size_t b = a; b <= c.text.size(); ++b) {
        expect_matches(
            run_pieces(c.text, {a, b}, c.options), c.want,
            std::string(c.name) + " cuts " + std::to_string(a) + "," + std::to_string(b));
      }
    }
  }
}

TEST(OutputParser, ByteByByte) {
  for (const Case& c : cases()) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < c.text.size(); ++i) cuts.push_back(i);
    expect_matches(run_pieces(c.text, cuts, c.options), c.want, std::string(c.name) + " bytes");
  }
}

// Content is released as soon as it cannot be part of a tag, not at the end.
TEST(OutputParser, StreamsWithoutWaitingForTheEnd) {
  OutputParser parser;
  std::vector<OutputEvent> events;
  parser.feed("<think>\nab", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, OutputEventKind::kReasoning);
  EXPECT_EQ(events[0].text, "ab");
  events.clear();
  parser.feed("\n</thi", &events);  // a newline and a partial tag are held
  EXPECT_TRUE(events.empty());
  parser.feed("nk>\n\nHello", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, OutputEventKind::kContent);
  EXPECT_EQ(events[0].text, "Hello");
  events.clear();
  parser.feed(" world\n<tool", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, " world");
  events.clear();
  parser.feed("_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, OutputEventKind::kToolCall);
  EXPECT_EQ(events[0].tool_call.name, "f");
  events.clear();
  parser.finish(&events);
  EXPECT_TRUE(events.empty());
}

TEST(OutputParser, ToolCallIdsFromSeedOrGenerator) {
  const std::string text = "<tool_call>" + kLs + "</tool_call><tool_call>" + kRead + "</tool_call>";
  OutputParserOptions seeded;
  seeded.tool_call_id_seed = 42;
  const ParsedOutput a = parse_output(text, seeded);
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0].id, make_tool_call_id(42, 0));
  EXPECT_EQ(a.tool_calls[1].id, make_tool_call_id(42, 1));
  EXPECT_NE(a.tool_calls[0].id, a.tool_calls[1].id);
  EXPECT_NE(make_tool_call_id(42, 0), make_tool_call_id(43, 0));
  EXPECT_EQ(a.tool_calls[0].id.size(), 5u + 24u);
  EXPECT_EQ(a.tool_calls[0].id.rfind("call_", 0), 0u);

  OutputParserOptions custom;
  custom.tool_call_id = [](size_t i) { return "id-" + std::to_string(i); };
  const ParsedOutput b = parse_output(text, custom);
  ASSERT_EQ(b.tool_calls.size(), 2u);
  EXPECT_EQ(b.tool_calls[0].id, "id-0");
  EXPECT_EQ(b.tool_calls[1].id, "id-1");
}

TEST(OutputParser, DecodeToolCallBody) {
  EXPECT_FALSE(decode_tool_call_body("").has_value());
  EXPECT_FALSE(decode_tool_call_body("{").has_value());
  EXPECT_FALSE(decode_tool_call_body("{\"name\": 1}").has_value());
  EXPECT_FALSE(decode_tool_call_body("{\"name\": \"f\"} trailing").has_value());
  EXPECT_FALSE(decode_tool_call_body("\"f\"").has_value());
  std::string deep = "{\"name\": \"f\", \"arguments\": ";
  deep += std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']') + "}";
  EXPECT_FALSE(decode_tool_call_body(deep).has_value());
  const auto ok = decode_tool_call_body(" \n{\"name\": \"f\", \"arguments\": [null, -0.0]}\n ");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->name, "f");
  EXPECT_EQ(ok->arguments, "[null, -0.0]");
  EXPECT_TRUE(ok->id.empty());
}

// Random texts built from tags, partial tags, newlines and JSON: any split gives the one-shot
// result, and with reasoning off a text in which no call parses comes back unchanged.
TEST(OutputParser, RandomTextsAnySplit) {
  const std::vector<std::string> fragments = {
      "<think>", "</think>", "<tool_call>", "</tool_call>",     "\n",   "\n\n", " ",
      "<",       "</",       "<tool_",      "</tool",           "<thi", "x",    "\xc3\xa9",
      "{",       "}",        kLs,           R"({"name": "f"})", "[1]"};
  core::Rng rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    const int n = 1 + static_cast<int>(rng.next_u64() % 12);
    for (int i = 0; i < n; ++i) text += fragments[rng.next_u64() % fragments.size()];
    for (const OutputParserOptions& options : {OutputParserOptions{}, no_reasoning()}) {
      const ParsedOutput whole = parse_output(text, options);
      Expected want(whole.reasoning_content, whole.content);
      for (const ToolCall& c : whole.tool_calls) want.calls.emplace_back(c.name, c.arguments);
      std::vector<size_t> cuts;
      for (size_t i = 1; i < text.size(); ++i) {
        if (rng.next_u64() % 3 == 0) cuts.push_back(i);
      }
      expect_matches(run_pieces(text, cuts, options), want, "random " + std::to_string(iter));
      if (!options.parse_reasoning && whole.tool_calls.empty()) {
        EXPECT_EQ(whole.content, text) << "random " << iter;
      }
    }
  }
}

// The point of the newline rules: prompt + what the model generated is exactly the template's
// rendering of the conversation with the parsed assistant turn appended, so the next request's
// prompt extends this one's tokens (the caches' prefix).
TEST(OutputParser, ParsedTurnRendersBackToTheGeneratedText) {
  const std::vector<std::string> generated = {
      "<think>\nI will list.\n</think>\n\nLet me list.\n<tool_call>\n" + kLs + "\n</tool_call>",
      "<think>\nTwo calls.\n</think>\n\n<tool_call>\n" + kLs + "\n</tool_call>\n<tool_call>\n" +
          kRead + "\n</tool_call>",
      "<think>\nJust answer.\n</think>\n\nThe answer is 4.",
      "<think>\n\n</think>\n\nNo reasoning.",
  };
  using Json = nlohmann::ordered_json;
  for (const std::string& text : generated) {
    Json body = Json::parse(R"({"messages":[{"role":"user","content":"q"}]})");
    const auto prompt = render_qwen3_chat(body);
    ASSERT_TRUE(prompt.has_value());

    const ParsedOutput p = parse_output(text);
    Json turn = {
        {"role", "assistant"}, {"content", p.content}, {"reasoning_content", p.reasoning_content}};
    if (!p.tool_calls.empty()) {
      turn["tool_calls"] = Json::array();
      for (const ToolCall& c : p.tool_calls) {
        turn["tool_calls"].push_back(
            {{"id", c.id},
             {"type", "function"},
             {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      }
    }
    body["messages"].push_back(turn);
    body["add_generation_prompt"] = false;
    const auto full = render_qwen3_chat(body);
    ASSERT_TRUE(full.has_value());
    EXPECT_EQ(*full, *prompt + text + "<|im_end|>\n");
  }
}

}  // namespace
}  // namespace anchorage::text

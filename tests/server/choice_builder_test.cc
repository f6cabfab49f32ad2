// ChoiceBuilder: reasoning and tool calls split out of the token stream, stop strings cut on
// both sides alike (the engine's make_stop_check and the HTTP side stop at the same token),
// stop ids never shown, logprobs carried with the tokens.
#include "server/choice_builder.h"

#include <gtest/gtest.h>

#include "byte_tokenizer.h"

namespace anchorage::server {
namespace {

using testing::byte_ids;
using testing::byte_tokenizer;
using testing::kImEnd;
using testing::kThink;

ChoiceOptions chat_options() {
  ChoiceOptions o;
  o.chat = true;
  o.parse_tool_calls = true;
  o.stop_ids = {kImEnd};
  o.tool_call_seed = 9;
  return o;
}

// Runs every id through a builder, one add() each; the accumulated choice.
ChoiceDelta build(const ChoiceOptions& o, const std::vector<int32_t>& ids, bool* tools = nullptr) {
  ChoiceBuilder b(byte_tokenizer(), o);
  ChoiceDelta all;
  for (int32_t id : ids) {
    ChoiceDelta d;
    TokenEvent e;
    e.token = id;
    e.logprob = -float(id) / 1000.0f;
    b.add(e, &d);
    all.append(std::move(d));
  }
  ChoiceDelta d;
  b.finish(&d);
  all.append(std::move(d));
  if (tools) *tools = b.saw_tool_calls();
  return all;
}

TEST(ChoiceBuilder, SplitsReasoningContentAndToolCalls) {
  auto ids = byte_ids(
      "<think>\nplan\n</think>\n\nHello\n<tool_call>\n{\"name\": \"bash\", \"arguments\": "
      "{\"command\": \"ls\"}}\n</tool_call>");
  ids.push_back(kImEnd);
  bool tools = false;
  const ChoiceDelta c = build(chat_options(), ids, &tools);
  EXPECT_EQ(c.reasoning, "plan");
  EXPECT_EQ(c.content, "Hello");
  ASSERT_EQ(c.tool_calls.size(), 1u);
  EXPECT_EQ(c.tool_calls[0].name, "bash");
  EXPECT_EQ(c.tool_calls[0].arguments, "{\"command\": \"ls\"}");
  EXPECT_EQ(c.tool_calls[0].id.rfind("call_", 0), 0u);
  EXPECT_TRUE(tools);
}

TEST(ChoiceBuilder, ToolCallsStayTextWhenNotParsed) {
  ChoiceOptions o = chat_options();
  o.parse_tool_calls = false;
  const std::string text = "a\n<tool_call>\n{\"name\": \"x\"}\n</tool_call>";
  const ChoiceDelta c = build(o, byte_ids(text));
  EXPECT_EQ(c.content, text);
  EXPECT_TRUE(c.tool_calls.empty());
}

TEST(ChoiceBuilder, CompletionsAreRawText) {
  ChoiceOptions o;
  o.chat = false;
  o.stop_ids = {kImEnd};
  const std::string text = "<think>x</think>y";
  auto ids = byte_ids(text);
  ids.push_back(kImEnd);
  const ChoiceDelta c = build(o, ids);
  EXPECT_EQ(c.content, text);
  EXPECT_TRUE(c.reasoning.empty());
}

TEST(ChoiceBuilder, StopStringCutsAndTheEngineAgrees) {
  ChoiceOptions o = chat_options();
  o.stop = {"STOP"};
  o.logprobs = true;
  const auto ids = byte_ids("abcSTOPdef");
  // The engine side: the first token for which the check says stop.
  auto check = make_stop_check(byte_tokenizer(), o.stop);
  ASSERT_TRUE(check);
  size_t stop_at = ids.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (check(ids[i])) {
      stop_at = i;
      break;
    }
  }
  EXPECT_EQ(stop_at, 6u);  // the 'P'
  const std::vector<int32_t> generated(ids.begin(), ids.begin() + long(stop_at) + 1);
  const ChoiceDelta c = build(o, generated);
  EXPECT_EQ(c.content, "abc");
  EXPECT_EQ(c.logprobs.size(), generated.size());  // every generated token keeps its logprob
  EXPECT_FALSE(make_stop_check(byte_tokenizer(), {}));
}

TEST(ChoiceBuilder, StopIdsAreNeitherShownNorGivenLogprobs) {
  ChoiceOptions o = chat_options();
  o.logprobs = true;
  auto ids = byte_ids("hi");
  ids.push_back(kImEnd);
  const ChoiceDelta c = build(o, ids);
  EXPECT_EQ(c.content, "hi");
  ASSERT_EQ(c.logprobs.size(), 2u);
  EXPECT_EQ(c.logprobs[0].token, 'h');
}

TEST(ChoiceBuilder, SplitCharacterIsHeldUntilComplete) {
  ChoiceOptions o;
  o.chat = false;
  ChoiceBuilder b(byte_tokenizer(), o);
  const std::string euro = "\xe2\x82\xac";
  ChoiceDelta d;
  for (size_t i = 0; i < 2; ++i) {
    TokenEvent e;
    e.token = int32_t(uint8_t(euro[i]));
    b.add(e, &d);
  }
  EXPECT_TRUE(d.content.empty());
  TokenEvent e;
  e.token = int32_t(uint8_t(euro[2]));
  b.add(e, &d);
  EXPECT_EQ(d.content, euro);
}

// The echo anchor's point: the client sends back the text the response showed. A special
// token the model sampled mid-answer is not shown, so the client's copy parts there — not at
// the end, as re-encoding the text with the special token in it would say.
TEST(EchoPartingPoint, ASpecialTokenTheResponseSkippedPartsTheCopyThere) {
  std::vector<int32_t> answer = byte_ids("Hello");
  answer.push_back(kImEnd);
  const std::vector<int32_t> rest = byte_ids(" world");
  answer.insert(answer.end(), rest.begin(), rest.end());
  EXPECT_EQ(echo_parting_point(byte_tokenizer(), answer), 5);
  // Added tokens that are not special stay in the text and encode back to themselves.
  std::vector<int32_t> shown = byte_ids("Hi");
  shown.push_back(kThink);
  const std::vector<int32_t> more = byte_ids("x");
  shown.insert(shown.end(), more.begin(), more.end());
  EXPECT_EQ(echo_parting_point(byte_tokenizer(), shown), int64_t(shown.size()));
}

// A sequence the tokenizer would not produce: here "<think>" spelled byte by byte, which
// encoding the text again turns into the one added token.
TEST(EchoPartingPoint, ANonCanonicalSequencePartsAtItsFirstId) {
  std::vector<int32_t> answer = byte_ids("ab");
  for (char c : std::string("<think>")) answer.push_back(int32_t(uint8_t(c)));
  EXPECT_EQ(echo_parting_point(byte_tokenizer(), answer), 2);
}

}  // namespace
}  // namespace anchorage::server

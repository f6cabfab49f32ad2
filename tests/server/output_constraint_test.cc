#include "server/output_constraint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "server/byte_tokenizer.h"

namespace anchorage::server {
namespace {

using testing::byte_ids;
using testing::byte_tokenizer;
using testing::kThink;
using testing::kThinkEnd;
using testing::kToolCall;

const ConstraintVocab& vocab() {
  static const ConstraintVocab v = make_constraint_vocab(byte_tokenizer());
  return v;
}

bool allows(std::span<const int32_t> allowed, int32_t id) {
  return std::find(allowed.begin(), allowed.end(), id) != allowed.end();
}

// Feeds tokens one by one as the generation loop would, returning the allowed set after them.
std::span<const int32_t> after(OutputConstraint& c, std::vector<int32_t>* sampled,
                               const std::vector<int32_t>& more) {
  for (int32_t t : more) {
    (void)c.allowed_next(*sampled);
    sampled->push_back(t);
  }
  return c.allowed_next(*sampled);
}

TEST(OutputConstraint, NothingToConstrainIsNull) {
  ConstraintSpec spec;  // auto, no budget
  EXPECT_EQ(OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("q")), nullptr);
  spec.tool_choice = ToolChoiceMode::kNone;
  EXPECT_EQ(OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("q")), nullptr);
}

TEST(OutputConstraint, WhitespaceVocabularyIsOnlyWhitespace) {
  const auto& ws = vocab().whitespace;
  EXPECT_TRUE(std::is_sorted(ws.begin(), ws.end()));
  EXPECT_TRUE(allows(ws, ' ') && allows(ws, '\n') && allows(ws, '\t'));
  EXPECT_FALSE(allows(ws, 'a'));
  EXPECT_FALSE(allows(ws, kThink));
}

TEST(OutputConstraint, RequiredLetsTheModelThinkThenOnlyACall) {
  ConstraintSpec spec;
  spec.tool_choice = ToolChoiceMode::kRequired;
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("prompt"));
  ASSERT_NE(c, nullptr);
  std::vector<int32_t> sampled;
  auto a = c->allowed_next(sampled);
  EXPECT_TRUE(allows(a, kThink) && allows(a, kToolCall) && allows(a, '\n'));
  EXPECT_FALSE(allows(a, 'x'));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  // Inside the reasoning anything goes.
  EXPECT_TRUE(after(*c, &sampled, {kThink, 'h', 'm'}).empty());
  // After </think>: whitespace or <tool_call> only, until the call opens.
  a = after(*c, &sampled, {kThinkEnd, '\n'});
  EXPECT_TRUE(allows(a, kToolCall) && allows(a, ' '));
  EXPECT_FALSE(allows(a, kThink) || allows(a, 'x'));
  EXPECT_TRUE(after(*c, &sampled, {kToolCall}).empty());
  EXPECT_EQ(c->hidden_count(), 0);
}

TEST(OutputConstraint, RequiredEndsAWhitespaceStall) {
  ConstraintSpec spec;
  spec.tool_choice = ToolChoiceMode::kRequired;
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("prompt"));
  ASSERT_NE(c, nullptr);
  std::vector<int32_t> sampled;
  auto a = after(*c, &sampled, {'\n'});
  EXPECT_TRUE(allows(a, ' '));
  a = after(*c, &sampled, {'\n'});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], kToolCall);
}

TEST(OutputConstraint, NamedFunctionForcesTheCallsHead) {
  ConstraintSpec spec{.tool_choice = ToolChoiceMode::kNamed, .function_name = "grep"};
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("p"));
  ASSERT_NE(c, nullptr);
  std::vector<int32_t> sampled;
  (void)after(*c, &sampled, {kToolCall});
  const std::vector<int32_t> head = byte_ids("\n{\"name\": \"grep\", \"arguments\": ");
  for (int32_t want : head) {
    auto a = c->allowed_next(sampled);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0], want);
    sampled.push_back(a[0]);
  }
  EXPECT_TRUE(c->allowed_next(sampled).empty());
}

TEST(OutputConstraint, ThinkingOffPromptStartsAtTheAnswer) {
  ConstraintSpec spec;
  spec.tool_choice = ToolChoiceMode::kRequired;
  std::vector<int32_t> prompt = byte_ids("q");
  for (int32_t t : {kThink, int32_t('\n'), int32_t('\n'), kThinkEnd, int32_t('\n')})
    prompt.push_back(t);
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, prompt);
  ASSERT_NE(c, nullptr);
  auto a = c->allowed_next({});
  EXPECT_TRUE(allows(a, kToolCall));
  EXPECT_FALSE(allows(a, kThink));
}

TEST(OutputConstraint, ReasoningBudgetForcesAHiddenPhraseThenTheClose) {
  ConstraintSpec spec;
  spec.reasoning_budget = 3;
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("q"));
  ASSERT_NE(c, nullptr);
  std::vector<int32_t> sampled;
  EXPECT_TRUE(after(*c, &sampled, {kThink, 'a', 'b'}).empty());  // 2 reasoning tokens
  sampled.push_back('c');                                        // the third
  const std::vector<int32_t> phrase = byte_ids(kReasoningClosePhrase);
  for (int32_t want : phrase) {
    auto a = c->allowed_next(sampled);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(a[0], want);
    sampled.push_back(a[0]);
  }
  auto a = c->allowed_next(sampled);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], kThinkEnd);
  sampled.push_back(kThinkEnd);
  EXPECT_TRUE(c->allowed_next(sampled).empty());
  sampled.push_back('A');
  EXPECT_TRUE(c->allowed_next(sampled).empty());
  // Hidden: exactly the phrase's positions; </think> and the answer are shown.
  EXPECT_EQ(c->hidden_count(), int64_t(phrase.size()));
  for (size_t i = 0; i < sampled.size(); ++i) {
    const bool in_phrase = i >= 4 && i < 4 + phrase.size();
    EXPECT_EQ(c->hidden(i), in_phrase) << i;
  }
}

TEST(OutputConstraint, ABudgetNeverReachedChangesNothing) {
  ConstraintSpec spec;
  spec.reasoning_budget = 100;
  auto c = OutputConstraint::create(vocab(), byte_tokenizer(), spec, byte_ids("q"));
  ASSERT_NE(c, nullptr);
  std::vector<int32_t> sampled;
  EXPECT_TRUE(after(*c, &sampled, {kThink, 'a', kThinkEnd, 'b', 'c'}).empty());
  EXPECT_EQ(c->hidden_count(), 0);
}

}  // namespace
}  // namespace anchorage::server

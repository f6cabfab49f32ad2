// Compaction as a continuation (server/compaction.h, docs/compaction.md): the request's shape
// on opencode's real bodies, the guard, the appended turn, and over HTTP a compaction served as
// the session's conversation plus one turn that answers exactly as a cold server fed the same
// ids, while a history that is not the held conversation is served as sent.

#include "server/compaction.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/disk_test_support.h"
#include "server/server_harness.h"
#include "text/chat_prompt.h"
#include "text/qwen3_chat_template.h"
#include "text/tokenizer.h"

namespace anchorage::server::testing {
namespace {

text::ChatPrompt corpus_chat(const std::string& name) {
  std::ifstream in(std::filesystem::path(ANCHORAGE_SOURCE_DIR) / "tests/corpus/chat_requests" /
                   name);
  std::stringstream ss;
  ss << in.rdbuf();
  auto chat = text::parse_chat_request(nlohmann::ordered_json::parse(ss.str()));
  EXPECT_TRUE(bool(chat)) << name;
  return chat ? *chat : text::ChatPrompt{};
}

TEST(Compaction, RecognisesOpencodesManualAndAutomaticCompactions) {
  for (const char* name : {"opencode_07.json", "opencode_13.json"}) {
    const text::ChatPrompt chat = corpus_chat(name);
    auto turn = recognise_compaction(chat);
    ASSERT_TRUE(turn) << name;
    EXPECT_EQ(turn->first_user_line, "\"list the files here and summarise README.md\"") << name;
    const std::string& t = turn->turn_text;
    // The turn closes the held assistant turn, carries the client's system text then its
    // instructions, and opens an answer with thinking off.
    EXPECT_EQ(t.rfind("<|im_end|>\n<|im_start|>user\n" + chat.messages[0].content + "\n\n", 0), 0u)
        << name;
    EXPECT_NE(t.find("Create a new anchored summary"), std::string::npos) << name;
    EXPECT_EQ(t.find("<conversation>\n"), std::string::npos) << name;  // the history is not in it
    EXPECT_EQ(t.find("[User]:"), std::string::npos) << name;
    const std::string tail = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
    ASSERT_GE(t.size(), tail.size());
    EXPECT_EQ(t.substr(t.size() - tail.size()), tail) << name;
  }
  // seq 7 saw two user turns; the guard's last line is the second.
  EXPECT_EQ(recognise_compaction(corpus_chat("opencode_07.json"))->last_user_line,
            "\"now show me hello.py\"");
}

TEST(Compaction, OtherRequestsAreNotCompactions) {
  // Main requests (tools) and title requests (two user messages) of the same traces.
  for (const char* name : {"opencode_01.json", "opencode_02.json", "opencode_06.json",
                           "opencode_08.json", "opencode_11.json", "opencode_14.json"})
    EXPECT_FALSE(recognise_compaction(corpus_chat(name))) << name;

  auto chat_of = [](const std::string& user) {
    text::ChatPrompt c;
    c.messages.push_back({text::ChatRole::kSystem, "summarise", std::nullopt, {}});
    c.messages.push_back({text::ChatRole::kUser, user, std::nullopt, {}});
    return c;
  };
  const std::string history = "<conversation>\n[User]: hi\n[Assistant]: hello\n</conversation>\n";
  EXPECT_TRUE(recognise_compaction(chat_of("Here:\n\n" + history + "Summarise.")));
  // The tag far into the message (a user quoting one), no user entry, no closing tag.
  EXPECT_FALSE(recognise_compaction(chat_of(std::string(300, 'x') + history)));
  EXPECT_FALSE(recognise_compaction(
      chat_of("<conversation>\n[Assistant]: hello\n</conversation>\nSummarise.")));
  EXPECT_FALSE(recognise_compaction(chat_of("<conversation>\n[User]: hi\n")));
  // "[User]: " inside a line is not an entry.
  EXPECT_FALSE(recognise_compaction(
      chat_of("<conversation>\n[Tool result]: [User]: x\n</conversation>\nSummarise.")));
  // With tools it is a main request.
  text::ChatPrompt with_tools = chat_of(history);
  with_tools.tools.push_back("{}");
  EXPECT_FALSE(recognise_compaction(with_tools));
}

TEST(Compaction, GuardNeedsBothUserLinesInTheRecord) {
  CompactionTurn turn;
  turn.first_user_line = "fix the parser";
  turn.last_user_line = "now run the tests";
  EXPECT_TRUE(
      record_matches(turn, "<|im_start|>user\nfix the parser<|im_end|>… now run the tests"));
  EXPECT_FALSE(record_matches(turn, "<|im_start|>user\nfix the parser<|im_end|>"));
  EXPECT_FALSE(record_matches(turn, "now run the tests"));
  EXPECT_FALSE(record_matches(CompactionTurn{}, "anything"));
}

TEST(Compaction, ModeNames) {
  EXPECT_EQ(parse_compaction_mode("client"), CompactionMode::kClient);
  EXPECT_EQ(parse_compaction_mode("continuation"), CompactionMode::kContinuation);
  EXPECT_FALSE(parse_compaction_mode("on"));
  EXPECT_EQ(compaction_mode_name(CompactionMode::kContinuation), "continuation");
}

// --- Over HTTP -------------------------------------------------------------------------------

const char* kAgentSystem = "You are a coding agent. Answer briefly.";
const char* kSummarySystem = "You are a context summarization agent.";

Json turn_one() {
  return Json{
      {"messages", Json::array({{{"role", "system"}, {"content", kAgentSystem}},
                                {{"role", "user"}, {"content", "\"fix the parser in main.c\""}}})},
      {"temperature", 0},
      {"max_tokens", 1}};  // the record is then exactly the rendered prompt
}

Json compaction_body(const std::string& user_line) {
  const std::string user =
      "Here is the conversation so far:\n\n<conversation>\n[User]: " + user_line +
      "\n\n[Assistant]: done.\n</conversation>\n\nSummarise it in one line.";
  return Json{{"messages", Json::array({{{"role", "system"}, {"content", kSummarySystem}},
                                        {{"role", "user"}, {"content", user}}})},
              {"temperature", 0},
              {"max_tokens", 8},
              {"logprobs", true}};
}

std::vector<int32_t> encode_chat(const text::Tokenizer& tok, const Json& body) {
  auto chat = text::parse_chat_request(body);
  EXPECT_TRUE(bool(chat));
  return tok.encode(text::render_qwen3_prompt(*chat));
}

ServerOptions continuation_options() {
  ServerOptions o;
  o.compaction = CompactionMode::kContinuation;
  return o;
}

TEST(CompactionHttp, ServedAsTheContinuationEqualsAColdRunOfTheServedIds) {
  ServerHarness h(continuation_options());
  ASSERT_TRUE(h.ok());
  const text::Tokenizer& tok = *h.model().tokenizer;
  post_chat(h, turn_one(), "ses_a");
  const std::vector<int32_t> record = encode_chat(tok, turn_one());

  const Json body = compaction_body("\"fix the parser in main.c\"");
  const Json got = post_chat(h, body, "ses_a");
  ASSERT_TRUE(got.contains("usage")) << got.dump();
  const Json& cache = got["usage"]["anchorage"]["cache"];
  // Written out here, independently of compaction.cc: the held conversation, then one turn.
  const std::string turn = std::string("<|im_end|>\n<|im_start|>user\n") + kSummarySystem +
                           "\n\nSummarise it in one line.<|im_end|>\n<|im_start|>assistant\n"
                           "<think>\n\n</think>\n\n";
  std::vector<int32_t> served = record;
  tok.encode(turn, &served);
  const int64_t n_turn = int64_t(served.size() - record.size());
  EXPECT_EQ(cache["served"], "continuation");
  EXPECT_EQ(cache["source"], "continuation");
  EXPECT_EQ(cache["aligned"], "continuation");
  EXPECT_EQ(cache["exact"], false);
  EXPECT_EQ(cache["cached"], int64_t(record.size()));
  EXPECT_EQ(cache["reread"], n_turn);
  EXPECT_EQ(cache["served_prompt_tokens"], int64_t(served.size()));
  // usage.prompt_tokens is the client's own prompt, and the part of it not read is cached.
  const int64_t client = int64_t(encode_chat(tok, body).size());
  EXPECT_EQ(got["usage"]["prompt_tokens"], client);
  EXPECT_EQ(got["usage"]["prompt_tokens_details"]["cached_tokens"],
            std::max<int64_t>(0, client - n_turn));
  EXPECT_EQ(cache_stats(h)["served"]["continuations"], 1) << cache_stats(h).dump();

  // A cold server fed the served ids gives the same tokens and logprobs, bit for bit.
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  const Json completion = {
      {"prompt", served}, {"temperature", 0}, {"max_tokens", 8}, {"logprobs", 0}};
  auto r = cold.post("/v1/completions", completion.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json want = parse_json(r->body)["choices"][0]["logprobs"];
  const Json& have = got["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(have.size(), want["token_logprobs"].size()) << got.dump() << "\n" << want.dump();
  ASSERT_GT(have.size(), 0u);
  for (size_t i = 0; i < have.size(); ++i) {
    EXPECT_EQ(have[i]["token"], want["tokens"][i]) << i;
    EXPECT_EQ(have[i]["logprob"].get<double>(), want["token_logprobs"][i].get<double>()) << i;
  }
}

TEST(CompactionHttp, AHistoryThatIsNotTheHeldConversationIsServedAsSent) {
  ServerHarness h(continuation_options());
  ASSERT_TRUE(h.ok());
  post_chat(h, turn_one(), "ses_a");
  const Json other = post_chat(h, compaction_body("\"write a README\""), "ses_a");
  EXPECT_EQ(other["usage"]["anchorage"]["cache"]["served"], "client") << other.dump();
  // Another session's compaction never reads this session's conversation.
  const Json foreign = post_chat(h, compaction_body("\"fix the parser in main.c\""), "ses_b");
  EXPECT_EQ(foreign["usage"]["anchorage"]["cache"]["served"], "client") << foreign.dump();
  const Json stats = cache_stats(h);
  EXPECT_EQ(stats["served"]["continuations"], 0) << stats.dump();
  EXPECT_EQ(stats["served"]["continuations_declined"], 2) << stats.dump();
}

TEST(CompactionHttp, OffByDefault) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  post_chat(h, turn_one(), "ses_a");
  const Json got = post_chat(h, compaction_body("\"fix the parser in main.c\""), "ses_a");
  EXPECT_EQ(got["usage"]["anchorage"]["cache"]["served"], "client") << got.dump();
  EXPECT_EQ(got["usage"]["anchorage"]["cache"]["exact"], true);
}

}  // namespace
}  // namespace anchorage::server::testing

// Compaction as a continuation (server/compaction.h, docs/compaction.md): the request's shape
// on opencode's real bodies, the guard, the appended turn, and over HTTP a compaction served as
// the session's conversation plus one turn that answers exactly as a cold server fed the same
// ids, while a history that is not the held conversation is served as sent.

#include "server/compaction.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cache/state_copy.h"
#include "engine/generation.h"
#include "server/disk_test_support.h"
#include "server/engine_queue.h"
#include "server/server_harness.h"
#include "server/summary_ahead.h"
#include "server/token_logprobs.h"
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

TEST(Compaction, TheDefaultTurnIsOpencodesOwn) {
  // The summary written ahead before any compaction request came uses opencode 1.18.33's turn.
  EXPECT_EQ(opencode_default_turn(),
            recognise_compaction(corpus_chat("opencode_07.json"))->turn_text);
  EXPECT_EQ(opencode_default_turn(),
            recognise_compaction(corpus_chat("opencode_13.json"))->turn_text);
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

const char* kInstructions = "Summarise it in one line.";

Json compaction_body(const std::string& user_line,
                     const std::string& instructions = kInstructions) {
  const std::string user =
      "Here is the conversation so far:\n\n<conversation>\n[User]: " + user_line +
      "\n\n[Assistant]: done.\n</conversation>\n\n" + instructions;
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

// Written out here, independently of compaction.cc: the held conversation, then one turn.
std::vector<int32_t> served_ids(const text::Tokenizer& tok, std::vector<int32_t> record,
                                const std::string& instructions = kInstructions) {
  const std::string turn = std::string("<|im_end|>\n<|im_start|>user\n") + kSummarySystem + "\n\n" +
                           instructions +
                           "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  tok.encode(turn, &record);
  return record;
}

// `got` (a compaction's answer) is the continuation of `record` from the tier `tier`, and its
// tokens and logprobs equal, bit for bit, a --no-cache server's given the served ids.
void expect_continuation_of(const ServerHarness& h, const Json& got, const Json& body,
                            const std::vector<int32_t>& record, const std::string& tier) {
  const text::Tokenizer& tok = *h.model().tokenizer;
  ASSERT_TRUE(got.contains("usage")) << got.dump();
  const Json& cache = got["usage"]["anchorage"]["cache"];
  const std::vector<int32_t> served = served_ids(tok, record);
  const int64_t n_turn = int64_t(served.size() - record.size());
  EXPECT_EQ(cache["served"], "continuation");
  EXPECT_EQ(cache["source"], "continuation");
  EXPECT_EQ(cache["tier"], tier);
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

TEST(CompactionHttp, ServedAsTheContinuationEqualsAColdRunOfTheServedIds) {
  ServerHarness h(continuation_options());
  ASSERT_TRUE(h.ok());
  post_chat(h, turn_one(), "ses_a");
  const Json body = compaction_body("\"fix the parser in main.c\"");
  const Json got = post_chat(h, body, "ses_a");
  expect_continuation_of(h, got, body, encode_chat(*h.model().tokenizer, turn_one()), "resident");
  EXPECT_EQ(cache_stats(h)["served"]["continuations"], 1) << cache_stats(h).dump();
}

// Another session's conversation of about the same size (not a guest: it replaces the rows).
Json other_turn(int salt) {
  Json b = turn_one();
  b["messages"][0]["content"] = disk_filler(30, salt);
  b["messages"][1]["content"] = disk_filler(20, salt + 1);
  return b;
}

TEST(CompactionHttp, AParkedConversationIsContinuedFromThePark) {
  ServerHarness h(continuation_options());
  ASSERT_TRUE(h.ok());
  post_chat(h, turn_one(), "ses_a");
  post_chat(h, other_turn(3), "ses_b");  // ses_a's rows go to the park
  ASSERT_EQ(cache_stats(h)["resident"]["parks"], 1) << cache_stats(h).dump();
  const Json body = compaction_body("\"fix the parser in main.c\"");
  const Json got = post_chat(h, body, "ses_a");
  expect_continuation_of(h, got, body, encode_chat(*h.model().tokenizer, turn_one()), "ram_park");
  EXPECT_EQ(cache_stats(h)["served"]["continuations"], 1);
}

TEST(CompactionHttp, AConversationTheParkGaveUpIsContinuedFromTheSpill) {
  TempDir dir;
  ServerOptions o = continuation_options();
  o.cache.disk_root = dir.path;
  o.cache.disk.admission.min_tokens = int64_t(1) << 40;  // the disk tier writes nothing
  o.cache.disk.min_free_bytes = 0;
  o.cache.store = false;  // no RAM snapshot of the displaced conversation
  o.cache.spill_options.give_up_min_tokens = 1;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  post_chat(h, turn_one(), "ses_a");
  post_chat(h, other_turn(3), "ses_b");  // ses_a parked
  post_chat(h, other_turn(7), "ses_c");  // ses_b parked over it: ses_a goes to the spill
  Json stats = cache_stats(h);
  ASSERT_EQ(stats["spill"]["saves"], 1) << stats.dump();
  const Json body = compaction_body("\"fix the parser in main.c\"");
  const Json got = post_chat(h, body, "ses_a");
  expect_continuation_of(h, got, body, encode_chat(*h.model().tokenizer, turn_one()), "nvme_spill");
  stats = cache_stats(h);
  EXPECT_EQ(stats["served"]["continuations"], 1);
  EXPECT_EQ(stats["spill"]["hits"], 1);
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

// --- The summary written ahead (summary_ahead.h) ---------------------------------------------

// The engine's state that a conversation of length e owns: its length, rows [0, e) of every
// view and every section.
struct EngineState {
  int64_t length = 0;
  cache::RowCopy rows;
  cache::SectionCopy sections;
};

EngineState capture_state(engine::Engine& engine, int64_t e) {
  return EngineState{engine.length(), cache::RowCopy::capture(engine, 0, e),
                     cache::SectionCopy::capture(engine)};
}

void expect_same_state(const EngineState& a, const EngineState& b) {
  EXPECT_EQ(a.length, b.length);
  ASSERT_EQ(a.rows.parts(), b.rows.parts());
  for (size_t i = 0; i < a.rows.parts(); ++i) {
    ASSERT_EQ(a.rows.part_bytes(i), b.rows.part_bytes(i));
    EXPECT_EQ(std::memcmp(a.rows.part(i), b.rows.part(i), a.rows.part_bytes(i)), 0) << "view " << i;
  }
  EXPECT_TRUE(a.sections.same_bytes(b.sections));
}

GenerationJob compaction_job(const ServedModel& m, int64_t max_tokens) {
  GenerationJob job;
  auto chat = text::parse_chat_request(compaction_body("\"fix the parser in main.c\""));
  EXPECT_TRUE(bool(chat));
  job.compaction = recognise_compaction(*chat);
  job.sampling.temperature = 0.0;
  job.stop_ids = m.stop_ids;
  job.max_tokens = max_tokens;
  job.top_logprobs = 2;
  return job;
}

TEST(SummaryAhead, StoppedOrNotItLeavesTheConversationBitIdenticalAndServesTheContinuation) {
  ServedModel* m = shared_model();
  ASSERT_NE(m, nullptr);
  engine::Engine& engine = *m->engine;
  const text::Tokenizer& tok = *m->tokenizer;
  const std::vector<int32_t> record = encode_chat(tok, turn_one());
  const int64_t e = int64_t(record.size());
  engine.reset();
  ASSERT_TRUE(engine.prefill(record).is_ok());
  const cache::SectionCopy end = cache::SectionCopy::capture(engine);
  const EngineState before = capture_state(engine, e);

  CompactionPrepareOptions o;
  o.enabled = true;
  o.min_tokens = 1;
  SummaryAhead ahead(o);
  const GenerationJob job = compaction_job(*m, 8);
  ahead.learn(job);
  const SummaryAhead::Conversation conv{record, "ses_a", &end};
  ASSERT_TRUE(ahead.wanted(conv));
  EXPECT_FALSE(ahead.wanted({record, "", &end})) << "no session: not an agent's conversation";

  // A request arrives while it decodes: stopped after the third token, nothing kept.
  int asked = 0;
  ASSERT_TRUE(ahead.prepare(engine, tok, conv, [&] { return ++asked >= 3; }).is_ok());
  EXPECT_EQ(ahead.stats().stopped, 1);
  EXPECT_EQ(ahead.stats().prepared, 0);
  expect_same_state(capture_state(engine, e), before);
  const std::vector<int32_t> served = served_ids(tok, record);
  EXPECT_FALSE(ahead.answer(job, served, "ses_a"));
  EXPECT_TRUE(ahead.wanted(conv)) << "a stopped run is tried again";

  // Written to its end: the same bits in place, and it is not wanted again.
  ASSERT_TRUE(ahead.prepare(engine, tok, conv, [] { return false; }).is_ok());
  EXPECT_EQ(ahead.stats().prepared, 1);
  expect_same_state(capture_state(engine, e), before);
  EXPECT_FALSE(ahead.wanted(conv));

  // Another session, other ids, a seeded sampled request or another sampling: not from it.
  EXPECT_FALSE(ahead.answer(job, served, "ses_b"));
  EXPECT_FALSE(ahead.answer(job, record, "ses_a"));
  GenerationJob seeded = job;
  seeded.sampling.temperature = 0.7;
  EXPECT_FALSE(ahead.answer(seeded, served, "ses_a"));
  auto answer = ahead.answer(job, served, "ses_a");
  ASSERT_TRUE(answer);
  EXPECT_EQ(ahead.stats().served, 1);

  // What the continuation produces: a cold run of the served ids, greedy.
  engine.reset();
  std::vector<TokenEvent> want;
  engine::GenerationOptions g;
  g.max_tokens = job.max_tokens;
  g.stop_ids = job.stop_ids;
  g.on_token = [&](int32_t token) {
    TokenEvent ev;
    ev.token = token;
    if (std::find(job.stop_ids.begin(), job.stop_ids.end(), token) == job.stop_ids.end())
      fill_token_logprobs(engine.logits(), job.top_logprobs, &ev);
    want.push_back(ev);
    return true;
  };
  ASSERT_TRUE(engine::generate(engine, served, g));
  ASSERT_EQ(answer->tokens.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(answer->tokens[i].token, want[i].token) << i;
    EXPECT_EQ(std::memcmp(&answer->tokens[i].logprob, &want[i].logprob, sizeof(float)), 0) << i;
    EXPECT_EQ(answer->tokens[i].top, want[i].top) << i;
  }
  engine.reset();
}

ServerOptions prepare_options() {
  ServerOptions o = continuation_options();
  o.cache.prepare.enabled = true;
  o.cache.prepare.idle_s = 0.05;
  o.cache.prepare.min_tokens = 1;
  return o;
}

// POST without a session key (the answer, or null).
Json post_chat_anonymous(ServerHarness& h, const Json& body) {
  auto r = h.post("/v1/chat/completions", body.dump());
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  return parse_json(r->body);
}

TEST(CompactionHttp, APreparedSummaryIsServedAsTheContinuationWouldAnswer) {
  const Json body = compaction_body("\"fix the parser in main.c\"");
  // The continuation's answer, from a server that writes nothing ahead.
  ServerHarness q(continuation_options());
  ASSERT_TRUE(q.ok());
  post_chat(q, turn_one(), "ses_a");
  const Json want = post_chat(q, body, "ses_a");
  ASSERT_EQ(want["usage"]["anchorage"]["cache"]["source"], "continuation") << want.dump();

  ServerHarness h(prepare_options());
  ASSERT_TRUE(h.ok());
  // A compaction request (of no session: nothing is written ahead for its conversation)
  // teaches the turn and the sampling.
  post_chat_anonymous(h, compaction_body("\"write a README\""));
  post_chat(h, turn_one(), "ses_a");
  Json stats;
  for (int i = 0; i < 600; ++i) {  // waits for the engine to be idle (up to a minute)
    stats = cache_stats(h);
    if (stats["served"]["summaries_prepared"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(stats["served"]["summaries_prepared"], 1) << stats.dump();
  const int64_t e = int64_t(encode_chat(*h.model().tokenizer, turn_one()).size());
  EXPECT_EQ(stats["served"]["summary_end"], e) << stats.dump();
  EXPECT_EQ(stats["resident"]["end_position"], e) << stats.dump();
  const Json got = post_chat(h, body, "ses_a");
  const Json& cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["source"], "prepared") << got.dump();
  EXPECT_EQ(cache["served"], "continuation");
  EXPECT_EQ(cache["exact"], false);
  EXPECT_EQ(got["usage"]["prompt_tokens"], want["usage"]["prompt_tokens"]);
  EXPECT_EQ(got["choices"][0].dump(), want["choices"][0].dump());
  EXPECT_EQ(cache_stats(h)["served"]["summaries_served"], 1);
  // Nothing ran on the engine: the conversation's end anchor is where it was.
  EXPECT_EQ(cache_stats(h)["resident"]["end_position"], e);
}

// The session's next turn after turn_one(): its prompt holds turn_one()'s whole, so it resumes at
// that conversation's end anchor.
Json next_turn() {
  Json b = turn_one();
  b["messages"].push_back({{"role", "assistant"}, {"content", "done."}});
  b["messages"].push_back({{"role", "user"}, {"content", "\"now run the tests\""}});
  b["max_tokens"] = 4;
  b["logprobs"] = true;
  b["top_logprobs"] = 2;
  return b;
}

// The session's next turn arrives while the idle engine writes turn_one()'s summary: the test's
// hook submits it at the run's `stop_at`-th look for a waiting request and lets the run look only
// once it waits, so the run is stopped there (no timing race). The request is answered as a
// server without caches answers it, and resumes at the conversation's end anchor.
void expect_the_next_turn_stops_the_summary(bool in_prefill) {
  // Instructions long enough that the turn crosses a prefill chunk line after the record.
  const std::string instructions = std::string(kInstructions) + "\n" + disk_filler(1200, 5);
  ServerOptions o = prepare_options();
  // The session's short turn replaces the long teaching compaction's rows (not a guest over
  // them: a guest's rows are not a conversation whose summary is written).
  o.cache.resident.guest_max_tokens = 0;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const text::Tokenizer& tok = *h.model().tokenizer;
  const int64_t e = int64_t(encode_chat(tok, turn_one()).size());
  const int64_t n = int64_t(served_ids(tok, encode_chat(tok, turn_one()), instructions).size());
  const int64_t chunk = h.model().engine->options().prefill_chunk;
  int64_t prefill_steps = 0;  // the run looks before each prefill call up to the last chunk line
  for (int64_t line = (e / chunk + 1) * chunk; line < n; line += chunk) ++prefill_steps;
  ASSERT_GE(prefill_steps, 1) << "the turn must cross a chunk line";
  // Before the first prefill call, or after the first sampled token.
  const int stop_at = in_prefill ? 1 : int(prefill_steps) + 1;

  EngineQueue& queue = h.server().test_queue();
  std::atomic<int> steps{0};
  std::atomic<bool> submitted{false};
  std::thread client;
  Json answer;
  struct JoinAtEnd {  // a failed assertion below still joins the client before `answer` goes
    EngineQueue& q;
    std::thread& t;
    ~JoinAtEnd() {
      q.test_on_summary_step(nullptr);
      if (t.joinable()) t.join();
    }
  } join_client{queue, client};
  queue.test_on_summary_step([&] {
    if (++steps != stop_at) return;
    client = std::thread([&] { answer = post_chat(h, next_turn(), "ses_a"); });
    for (int i = 0; i < 120000 && queue.depth() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    submitted = true;
  });
  // A compaction of no session teaches the turn (nothing is written ahead for it), then the
  // session's turn whose summary the idle engine starts writing.
  post_chat_anonymous(h, compaction_body("\"write a README\"", instructions));
  post_chat(h, turn_one(), "ses_a");
  for (int i = 0; i < 1200 && !submitted; ++i)  // the engine idle, the run started (a minute)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(submitted) << cache_stats(h).dump();
  client.join();

  const Json& cache = answer["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["cached"], e) << answer.dump();
  EXPECT_EQ(cache["exact"], true);
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  const Json want = post_chat(cold, next_turn(), "ses_a");
  ASSERT_TRUE(answer["choices"][0]["logprobs"]["content"].size() > 0) << answer.dump();
  EXPECT_EQ(answer["choices"][0].dump(), want["choices"][0].dump());

  // The stopped run kept nothing; the next idle period writes the new conversation's summary
  // (had the request not stopped the first run, both would be written).
  Json stats;
  for (int i = 0; i < 1200; ++i) {
    stats = cache_stats(h);
    const Json& s = stats["served"];
    if (s["summaries_started"] == 2 && s["summaries_prepared"].get<int64_t>() +
                                               s["summaries_stopped"].get<int64_t>() +
                                               s["summaries_failed"].get<int64_t>() ==
                                           2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(stats["served"]["summaries_started"], 2) << stats.dump();
  EXPECT_EQ(stats["served"]["summaries_stopped"], 1) << stats.dump();
  EXPECT_EQ(stats["served"]["summaries_prepared"], 1) << stats.dump();
  EXPECT_EQ(stats["served"]["summaries_failed"], 0) << stats.dump();
}

TEST(CompactionHttp, TheNextTurnStopsTheSummaryInItsPrefillAndResumesAtTheEndAnchor) {
  expect_the_next_turn_stops_the_summary(/*in_prefill=*/true);
}

TEST(CompactionHttp, TheNextTurnStopsTheSummaryInItsDecodeAndResumesAtTheEndAnchor) {
  expect_the_next_turn_stops_the_summary(/*in_prefill=*/false);
}

}  // namespace
}  // namespace anchorage::server::testing

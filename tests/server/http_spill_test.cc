// The session spill through the HTTP API (issue 11 §5): a server stopped as SIGTERM stops it
// saves the conversation in place, the next server over the same directory reads it back before
// its first request, and the conversation's next turn answers exactly as a --no-cache server
// does; a conversation displaced by another session is read back from the spill when its next
// turn comes, with the same answer as a --no-cache server. The drain saves the parked
// conversation too; the park giving a conversation up and a store restore clearing the rows in
// place save it first.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "server/disk_test_support.h"
#include "server/engine_queue.h"

namespace anchorage::server::testing {
namespace {

Json turn1(int salt) {
  Json b = Json::object();
  b["model"] = "anchorage-tiny";
  b["messages"] = Json::array({Json{{"role", "system"}, {"content", disk_filler(900, salt)}},
                               Json{{"role", "user"}, {"content", disk_filler(40, salt + 1)}}});
  b["max_tokens"] = 6;
  b["temperature"] = 0;
  b["logprobs"] = true;
  b["top_logprobs"] = 2;
  return b;
}

// Conversations with one system prompt of ~1,500 tokens: the next one resumes from the anchor
// at 1,024 and parks the one before from there (the park's head stays in the engine).
Json shared_head_turn1(int salt) {
  Json b = turn1(salt);
  b["messages"][0]["content"] = disk_filler(1500, 1);
  return b;
}

// The conversation's next turn: the answer sent back as it came, and one more user message.
Json turn2(Json body, const Json& answer, int salt) {
  body["messages"].push_back(
      Json{{"role", "assistant"}, {"content", answer["choices"][0]["message"]["content"]}});
  body["messages"].push_back(Json{{"role", "user"}, {"content", disk_filler(20, salt)}});
  return body;
}

ServerOptions spill_options(const std::string& root) {
  ServerOptions o;
  o.cache.disk_root = root;
  o.cache.disk.admission.min_tokens = int64_t(1) << 40;  // the disk tier writes nothing
  o.cache.disk.min_free_bytes = 0;
  o.cache.store = false;  // no RAM snapshot of the displaced conversation
  o.cache.spill_options.min_tokens = 512;
  o.cache.resident.park_bytes = 0;  // the park holds nothing: a displacement spills
  return o;
}

Json spill_stats(ServerHarness& h) {
  return cache_stats(h)["spill"];
}

TEST(HttpSpill, TheDrainSavesTheConversationAndTheNextStartReadsItBack) {
  TempDir dir;
  const Json first = turn1(1);
  Json second;
  {
    ServerHarness h(spill_options(dir.path));
    ASSERT_TRUE(h.ok());
    const Json a = post_chat(h, first, "conv-1");
    ASSERT_GT(a["usage"]["prompt_tokens"].get<int64_t>(), 1024);
    second = turn2(first, a, 2);
  }  // the shutdown drains: the conversation in place goes to the spill
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  const Json a_cold = post_chat(cold, first, "x");
  const Json want = post_chat(cold, second, "x");
  ServerHarness h(spill_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json st = spill_stats(h);
  EXPECT_EQ(st["enabled"], true);
  EXPECT_EQ(st["entries"], 1);
  EXPECT_EQ(st["hits"], 1) << "read back before the first request";
  auto health = h.client().Get("/health");
  ASSERT_TRUE(health);
  const Json hc = parse_json(health->body)["cache"];
  EXPECT_EQ(hc["spill"]["entries"], 1);
  EXPECT_GT(hc["disk_writes"]["spill_gb"].get<double>(), 0.0);
  const Json b = post_chat(h, second, "conv-1");
  const Json cache = b["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["exact"], true);
  EXPECT_EQ(cache["tier"], "resident") << "the conversation was in place";
  EXPECT_GE(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            a_cold["usage"]["prompt_tokens"].get<int64_t>() - 1);
  EXPECT_EQ(b["choices"][0].dump(), want["choices"][0].dump());
}

TEST(HttpSpill, ADisplacedConversationComesBackFromTheSpillAndAnswersAsANoCacheServer) {
  TempDir dir;
  ServerHarness h(spill_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json a1 = turn1(1);
  const Json a = post_chat(h, a1, "conv-a");
  const Json b = post_chat(h, turn1(5), "conv-b");  // another session displaces conv-a
  Json st = spill_stats(h);
  EXPECT_EQ(st["saves"], 1);
  EXPECT_EQ(st["entries"], 1);
  const Json a2 = turn2(a1, a, 3);
  // The peek route sees it, with the read's estimated cost.
  auto peek = h.client().Post("/v1/cache/peek", a2.dump(), "application/json");
  ASSERT_TRUE(peek);
  ASSERT_EQ(peek->status, 200) << peek->body;
  const Json p = parse_json(peek->body);
  EXPECT_EQ(p["tier"], "nvme_spill");
  EXPECT_GT(p["restore_ms"].get<double>(), 0.0);
  const Json got = post_chat(h, a2, "conv-a");
  const Json cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "nvme_spill");
  EXPECT_EQ(cache["source"], "spill");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_GE(got["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            a["usage"]["prompt_tokens"].get<int64_t>() - 1);
  st = spill_stats(h);
  EXPECT_EQ(st["hits"], 1);
  // conv-b was displaced in turn (a spill save of its own; conv-a's entry stays).
  EXPECT_EQ(st["saves"], 2);
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  post_chat(cold, a1, "x");
  const Json want = post_chat(cold, a2, "x");
  EXPECT_EQ(got["choices"][0].dump(), want["choices"][0].dump());
  auto metrics = h.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("anchorage_spill_hits_total 1"), std::string::npos);
}

// A chat request with the session key `session`, or without any ("").
Json post_turn(ServerHarness& h, const Json& body, const std::string& session) {
  if (!session.empty()) return post_chat(h, body, session);
  auto r = h.client().Post("/v1/chat/completions", body.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  return parse_json(r->body);
}

// The conversation's next turn over `h` answers as a --no-cache server's (tokens, logprobs),
// read back from the spill.
void expect_next_turn_from_spill(ServerHarness& h, const Json& first, const Json& answer,
                                 const std::string& session) {
  const Json next = turn2(first, answer, 7);
  const Json got = post_turn(h, next, session);
  const Json cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "nvme_spill");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_GE(got["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            answer["usage"]["prompt_tokens"].get<int64_t>() - 1);
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  post_chat(cold, first, "x");
  const Json want = post_chat(cold, next, "x");
  EXPECT_EQ(got["choices"][0].dump(), want["choices"][0].dump());
}

void clear_ram(ServerHarness& h) {
  auto r = h.client().Post("/v1/cache/clear?tier=ram", "", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
}

TEST(HttpSpill, TheDrainSavesTheParkedConversationToo) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.resident.park_bytes = int64_t(1) << 30;  // conv-a is parked, not spilled, by conv-b
  const Json a1 = shared_head_turn1(1);
  Json a;
  {
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    a = post_chat(h, a1, "conv-a");
    post_chat(h, shared_head_turn1(5), "conv-b");
    EXPECT_EQ(cache_stats(h)["resident"]["parks"], 1);
    EXPECT_EQ(spill_stats(h)["saves"], 0) << "the park holds conv-a";
  }  // the drain: conv-a from the park, conv-b in place
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json st = spill_stats(h);
  EXPECT_EQ(st["entries"], 2);
  EXPECT_EQ(st["hits"], 1) << "conv-b read back before the first request";
  expect_next_turn_from_spill(h, a1, a, "conv-a");
}

TEST(HttpSpill, TheParkGivingAConversationUpSavesItFirst) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.resident.park_bytes = int64_t(1) << 30;
  o.cache.spill_options.give_up_min_tokens = 512;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json a1 = shared_head_turn1(1);
  const Json a = post_chat(h, a1, "conv-a");
  post_chat(h, shared_head_turn1(5), "conv-b");  // conv-a parked above the shared head
  EXPECT_EQ(spill_stats(h)["saves"], 0);
  post_chat(h, turn1(9), "conv-c");  // conv-b parked over conv-a: the park gives conv-a up
  Json st = spill_stats(h);
  EXPECT_EQ(st["saves"], 1);
  EXPECT_EQ(st["entries"], 1);
  clear_ram(h);  // conv-c and the parked conv-b go; the spill stays
  expect_next_turn_from_spill(h, a1, a, "conv-a");
}

TEST(HttpSpill, AGivenUpConversationBelowTheLengthIsNotSaved) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.resident.park_bytes = int64_t(1) << 30;
  o.cache.spill_options.give_up_min_tokens = 1 << 20;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  post_chat(h, turn1(1), "conv-a");
  post_chat(h, turn1(5), "conv-b");
  post_chat(h, turn1(9), "conv-c");
  EXPECT_EQ(cache_stats(h)["resident"]["parks"], 2);
  EXPECT_EQ(spill_stats(h)["saves"], 0);
}

TEST(HttpSpill, AStoreRestoreSavesTheConversationInPlaceFirst) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.store = true;                                 // conv-a's next turn from the store
  o.cache.spill_options.min_tokens = int64_t(1) << 40;  // no displacement save
  o.cache.spill_options.give_up_min_tokens = 512;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json a1 = turn1(1);
  const Json a = post_chat(h, a1, "conv-a");
  const Json b1 = turn1(5);
  const Json b = post_chat(h, b1, "conv-b");
  EXPECT_EQ(spill_stats(h)["saves"], 0);
  const Json a2 = post_chat(h, turn2(a1, a, 3), "conv-a");
  EXPECT_EQ(a2["usage"]["anchorage"]["cache"]["source"], "store");
  const Json st = spill_stats(h);
  EXPECT_EQ(st["saves"], 1) << "conv-b saved before the store restore cleared it";
  clear_ram(h);
  expect_next_turn_from_spill(h, b1, b, "conv-b");
}

// The bug of the first restart figures: the next turn resumed at the spill's last block line
// (3,072) instead of the end of the conversation's last prefill (3,822), the anchor where a
// next turn that sends another answer than the one generated parts from the rows. The spill
// keeps that anchor (off every block line) and offers it after a restart.
TEST(HttpSpill, AfterARestartANextTurnWithAnotherAnswerResumesAtTheEndOfThePrefill) {
  TempDir dir;
  const Json first = turn1(1);
  Json second;
  int64_t prefill_end = 0;
  {
    ServerHarness h(spill_options(dir.path));
    ASSERT_TRUE(h.ok());
    Json a = post_chat(h, first, "conv-1");
    prefill_end = a["usage"]["prompt_tokens"].get<int64_t>();
    ASSERT_GT(prefill_end, 1024);
    ASSERT_NE(prefill_end % 1024, 0) << "the end of the prefill is off the block lines";
    a["choices"][0]["message"]["content"] = disk_filler(12, 77);  // the client's own answer
    second = turn2(first, a, 2);
  }  // the drain saves the conversation
  ServerHarness h(spill_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json before = spill_stats(h);  // the conversation read back at start
  const Json b = post_chat(h, second, "conv-1");
  const Json cache = b["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "nvme_spill");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_EQ(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), prefill_end)
      << "resumed at the end of the first turn's prefill";
  const Json after = spill_stats(h);
  EXPECT_EQ(after["hits"].get<int64_t>(), before["hits"].get<int64_t>() + 1);
  EXPECT_EQ(after["blocks_read"], before["blocks_read"])
      << "the rows were in place: only the anchor read";
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  post_chat(cold, first, "x");
  const Json want = post_chat(cold, second, "x");
  EXPECT_EQ(b["choices"][0].dump(), want["choices"][0].dump());
}

// Two conversations without session keys that share their first block (one system prompt of
// ~1,500 tokens) are two entries: the drain saves both (the parked one and the one in place),
// and after a restart each next turn comes back from the spill with a --no-cache server's
// answer.
TEST(HttpSpill, TwoKeylessConversationsWithOneHeadAreTwoEntries) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.resident.park_bytes = int64_t(1) << 30;  // conv-a parked by conv-b
  const Json a1 = shared_head_turn1(1);
  const Json b1 = shared_head_turn1(5);
  Json a, b;
  {
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    a = post_turn(h, a1, "");
    b = post_turn(h, b1, "");
    EXPECT_EQ(cache_stats(h)["resident"]["parks"], 1);
  }  // the drain: conv-a from the park, conv-b in place
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(spill_stats(h)["entries"], 2) << "one entry each, not one over the other";
  clear_ram(h);  // conv-b, read back at start, goes from RAM: both from the spill
  expect_next_turn_from_spill(h, a1, a, "");
  expect_next_turn_from_spill(h, b1, b, "");
  EXPECT_EQ(spill_stats(h)["hits"], 3) << "conv-b at start, then both next turns";
}

// A --no-cache server's answer to `second` after `first`: what every cached answer equals.
Json no_cache_answer(const Json& first, const Json& second) {
  ServerHarness cold(no_cache_options());
  EXPECT_TRUE(cold.ok());
  if (!cold.ok()) return Json();
  post_chat(cold, first, "x");
  return post_chat(cold, second, "x");
}

// POST /v1/cache/prewarm with the session's header: its answer.
Json prewarm(ServerHarness& h, const Json& body, const std::string& session) {
  auto r = h.post("/v1/cache/prewarm", body.dump(), {{"x-session-id", session}});
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  return parse_json(r->body);
}

ServerOptions prewarm_options(const std::string& root) {
  ServerOptions o = spill_options(root);
  o.cache.prewarm_idle_ms = 0;  // the conversation in place may go at once
  return o;
}

// A displaced conversation prewarmed: its next request resumes at its end anchor in place,
// with no read of its own (the spill's reads do not move), and a --no-cache server's answer.
TEST(HttpSpill, APrewarmReadsTheConversationBackAndItsRequestReadsNothing) {
  TempDir dir;
  ServerHarness h(prewarm_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json a1 = turn1(1);
  const Json a = post_chat(h, a1, "conv-a");
  post_chat(h, turn1(5), "conv-b");  // conv-a goes to the spill
  const Json a2 = turn2(a1, a, 3);
  const Json pw = prewarm(h, a2, "conv-a");
  ASSERT_EQ(pw["prewarmed"], true) << pw.dump();
  EXPECT_GT(pw["tokens"].get<int64_t>(), a["usage"]["prompt_tokens"].get<int64_t>());
  const Json before = spill_stats(h);
  EXPECT_EQ(before["prewarms"], 1);
  EXPECT_EQ(before["hits"], 0);
  EXPECT_EQ(cache_stats(h)["memory"]["reads_checked"], 1) << "the read was charged to the Budget";
  const Json got = post_chat(h, a2, "conv-a");
  const Json cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "resident");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_GE(got["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            a["usage"]["prompt_tokens"].get<int64_t>() - 1);
  const Json after = spill_stats(h);
  EXPECT_EQ(after["hits"], before["hits"]) << "the request read nothing from the spill";
  EXPECT_EQ(after["blocks_read"], before["blocks_read"]);
  EXPECT_EQ(after["read_bytes"], before["read_bytes"]);
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  post_chat(cold, a1, "x");
  const Json want = post_chat(cold, a2, "x");
  EXPECT_EQ(got["choices"][0].dump(), want["choices"][0].dump());
}

// A request that arrives while a prewarm reads blocks: the prewarm stops before its next block
// with nothing written (why: yielded), the entry stays, and the request answers as a
// --no-cache server does. The request is sent from the prewarm's own seam before its second
// block, which waits until it is queued: the yield does not race the read.
TEST(HttpSpill, ARequestArrivingDuringAPrewarmMakesItYield) {
  TempDir dir;
  ServerOptions o = prewarm_options(dir.path);
  ServerHarness* server = nullptr;
  std::thread request;
  const Json a1 = turn1(1);
  Json a2;
  Json got;
  int blocks = 0;
  bool queued = false;
  o.cache.test_prewarm_block = [&] {
    if (++blocks != 2) return;
    request = std::thread([&] { got = post_chat(*server, a2, "conv-a"); });
    for (int i = 0; i < 60000 && !queued; ++i) {
      queued = server->server().test_queue().depth() > 0;
      if (!queued) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  server = &h;
  const Json a = post_chat(h, a1, "conv-a");
  post_chat(h, turn1(5), "conv-b");  // conv-a goes to the spill
  a2 = turn2(a1, a, 3);
  const Json pw = prewarm(h, a2, "conv-a");
  if (request.joinable()) request.join();
  EXPECT_TRUE(queued) << "the request reached the queue during the prewarm";
  EXPECT_EQ(blocks, 2) << "asked before each block, stopped before the second";
  EXPECT_EQ(pw["prewarmed"], false) << pw.dump();
  EXPECT_EQ(pw["why"], "yielded");
  const Json st = spill_stats(h);
  EXPECT_EQ(st["prewarm_yields"], 1);
  EXPECT_EQ(st["prewarms"], 0);
  EXPECT_EQ(st["hits"], 1) << "the entry stayed: the request read it";
  const Json cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "nvme_spill");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_EQ(got["choices"][0].dump(), no_cache_answer(a1, a2)["choices"][0].dump());
}

// The blocks a prewarm reads wait in RAM until the last is checked: the memory Budget sees
// them before the read. Under a peak that holds the engine and nothing more, the prewarm does
// not read (why: memory), the refusal is the Budget's, and the entry stays on the disk. It is
// refused before anything is done: the conversation in place (conv-b, read back at the start)
// is neither saved again nor displaced.
TEST(HttpSpill, APrewarmsRowsAreChargedToTheMemoryBudget) {
  TempDir dir;
  ServerOptions o = prewarm_options(dir.path);
  const Json a1 = turn1(1);
  Json a2;
  int64_t engine_bytes = 0;
  {
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    const Json a = post_chat(h, a1, "conv-a");
    post_chat(h, turn1(5), "conv-b");  // conv-a goes to the spill
    a2 = turn2(a1, a, 3);
    engine_bytes = cache_stats(h)["memory"]["engine_bytes"].get<int64_t>();
  }  // the drain saves conv-b, read back at the next start
  ASSERT_GT(engine_bytes, 0);
  o.cache.budget.peak_bytes = engine_bytes + 1;
  o.cache.budget.ceiling_bytes = engine_bytes + 1;
  o.cache.budget.slack_bytes = 0;
  o.cache.spill_options.give_up_min_tokens = 1;  // a prewarm that reads would save conv-b first
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json pw = prewarm(h, a2, "conv-a");
  EXPECT_EQ(pw["prewarmed"], false) << pw.dump();
  EXPECT_EQ(pw["why"], "memory");
  const Json memory = cache_stats(h)["memory"];
  EXPECT_EQ(memory["reads_checked"], 1);
  EXPECT_EQ(memory["refusals"], 1);
  const Json st = spill_stats(h);
  EXPECT_EQ(st["prewarms"], 0);
  EXPECT_EQ(st["entries"], 2) << "conv-a's entry stays";
  EXPECT_EQ(st["saves"], 0) << "a refused prewarm saves nothing";
  EXPECT_GT(cache_stats(h)["resident"]["end_position"].get<int64_t>(), 0)
      << "conv-b is still in place";
}

// Each answer of a prewarm that does not read: nothing on the spill, the rows in place used a
// moment ago, a read estimated over the limit, and a request running.
TEST(HttpSpill, APrewarmSaysWhyItDidNotRead) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);  // rows used in the last 120 s stay
  o.cache.prewarm_wait_ms = 0;
  const Json a1 = turn1(1);
  Json a2;
  {
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    Json pw = prewarm(h, a1, "conv-a");
    EXPECT_EQ(pw["prewarmed"], false);
    EXPECT_EQ(pw["why"], "not_on_disk");
    const Json a = post_chat(h, a1, "conv-a");
    post_chat(h, turn1(5), "conv-b");  // conv-a goes to the spill
    a2 = turn2(a1, a, 3);
    // The engine may still be at work after conv-b's answer (its echo anchor, docs/cache.md):
    // busy until then.
    for (int i = 0; i < 200; ++i) {
      pw = prewarm(h, a2, "conv-a");
      if (pw["why"] != "busy") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(pw["prewarmed"], false);
    EXPECT_EQ(pw["why"], "resident_in_use");
    // A request running, with no wait for its end: busy.
    Json long_turn = turn1(9);
    long_turn["max_tokens"] = 2000;
    long_turn["stream"] = true;
    Json during;
    h.post_streamed("/v1/chat/completions", long_turn.dump(), [&](const std::string& so_far) {
      if (so_far.find("data:") == std::string::npos) return true;
      during = prewarm(h, a2, "conv-a");
      return false;  // hang up: the request is cut
    });
    EXPECT_EQ(during["prewarmed"], false);
    EXPECT_EQ(during["why"], "busy");
    EXPECT_EQ(spill_stats(h)["prewarms"], 0);
  }
  o.cache.prewarm_idle_ms = 0;
  o.cache.prewarm_max_ms = 0.0;  // any read is too long
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json pw = prewarm(h, a2, "conv-a");
  EXPECT_EQ(pw["prewarmed"], false);
  EXPECT_EQ(pw["why"], "too_long");
}

// A spill the Planner finds too slow to read (a prior rate of 1 byte/s) is not used, and the
// request that could have used it is counted (and logged) by why.
TEST(HttpSpill, AnEntryTooSlowToReadIsCountedAsUnused) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.spill_options.prior_read_bytes_per_s = 1.0;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json a1 = turn1(1);
  const Json a = post_chat(h, a1, "conv-a");
  post_chat(h, turn1(5), "conv-b");  // conv-a goes to the spill
  EXPECT_EQ(spill_stats(h)["unused_slow"], 0);
  const Json got = post_chat(h, turn2(a1, a, 3), "conv-a");
  EXPECT_NE(got["usage"]["anchorage"]["cache"]["tier"], "nvme_spill");
  const Json st = spill_stats(h);
  EXPECT_EQ(st["unused_slow"], 1);
  EXPECT_EQ(st["hits"], 0);
  auto metrics = h.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("anchorage_spill_unused_slow_total 1"), std::string::npos);
}

// A next turn whose copy of an earlier answer re-tokenizes differently: under the rows policy
// the session's spilled entry serves it to its end through the end alignment on the entry's own
// tokens and marks, as RAM would (issue 11 §1) — not counted as unused_end_no_align. (Under the
// exact policy every tier matches the client's tokens; that count is tested in
// session_spill_test.cc.) Random-weight answers re-tokenize differently now and then; the test
// looks for one under the rows policy, whose alignment in RAM says so (`served: rows` at the
// end anchor).
TEST(HttpSpill, AnEntryOnlyTheEndAlignmentServesIsServedUnderTheRowsPolicy) {
  TempDir dir;
  ServerOptions o = spill_options(dir.path);
  o.cache.resume_policy = ResumePolicy::kRows;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  std::string session;
  Json next;
  for (int q = 0; q < 24 && session.empty(); ++q) {
    Json t1 = turn1(1);  // one system prompt: each try resumes from its anchors
    t1["messages"][1]["content"] = disk_filler(6 + q % 5, 20 + q);
    t1["max_tokens"] = 24;
    const std::string s = "conv-" + std::to_string(q);
    const Json a = post_chat(h, t1, s);
    Json t2 = turn2(t1, a, 0);
    t2["messages"].back()["content"] = disk_filler(1100, 70 + q);  // a block past the answer
    const Json b = post_chat(h, t2, s);
    const Json& c = b["usage"]["anchorage"]["cache"];
    const int64_t end = a["usage"]["prompt_tokens"].get<int64_t>() +
                        a["usage"]["completion_tokens"].get<int64_t>() - 1;
    if (c["served"] != "rows" || c["cached"].get<int64_t>() < end) continue;
    session = s;
    next = turn2(t2, b, 5);
  }
  ASSERT_FALSE(session.empty()) << "no answer re-tokenized differently";
  post_chat(h, turn1(5), "conv-b");  // the session goes to the spill
  const int64_t hits = spill_stats(h)["hits"].get<int64_t>();
  const Json got = post_chat(h, next, session);
  const Json& c = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(c["tier"], "nvme_spill") << c.dump();
  EXPECT_EQ(c["served"], "rows");
  EXPECT_EQ(c["exact"], false);
  EXPECT_EQ(c["cached"].get<int64_t>() + c["reread"].get<int64_t>(),
            got["usage"]["prompt_tokens"].get<int64_t>());
  const Json st = spill_stats(h);
  EXPECT_EQ(st["hits"].get<int64_t>(), hits + 1);
  EXPECT_EQ(st["unused_end_no_align"], 0);
}

}  // namespace
}  // namespace anchorage::server::testing

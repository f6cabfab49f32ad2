// The caches through the HTTP API (issue 5 §6, server level): a multi-turn conversation
// replayed with the caches on gives the same answers and logprobs as a server with every
// tier off (--no-cache), while cached_tokens grows turn by turn; the peek route predicts what
// the next turn resumes from; a second identical greedy request is served by the response
// cache; a prefill that cannot fit the memory peak gets a 503 with Retry-After.
//
// End alignment by text is off in the on/off comparison: it serves the rows' own tokens where
// the client's copy re-tokenizes a sampled answer differently, which is a different (and
// intended) prompt from the one a cold server reads (docs/end-alignment.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

// Deterministic filler of roughly n words (no user data).
std::string filler(int words, int salt) {
  static const char* kWords[] = {"alpha", "bravo", "delta", "gamma", "kilo",
                                 "lima",  "omega", "sigma", "tango", "zulu"};
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kWords[(i * 7 + salt) % 10];
    out += (i % 12 == 11) ? ".\n" : " ";
  }
  return out;
}

Json turn_body(const Json& messages) {
  Json b = Json::object();
  b["model"] = "anchorage-tiny";
  b["messages"] = messages;
  b["max_tokens"] = 6;
  b["temperature"] = 0;
  b["logprobs"] = true;
  b["top_logprobs"] = 2;
  b["prompt_cache_key"] = "conversation-1";
  return b;
}

ServerOptions cache_options(bool enabled) {
  ServerOptions o;
  o.cache.enabled = enabled;
  o.cache.end_align = false;
  return o;
}

struct Turn {
  Json body;
  Json answer;  // choices[0]
  Json usage;
};

// Plays `turns` turns on a server: each sends the conversation so far, then appends the
// answer as the client got it and a tool-result-shaped user message.
std::vector<Turn> play(ServerHarness& h, int turns) {
  std::vector<Turn> out;
  Json messages = Json::array({Json{{"role", "system"}, {"content", filler(900, 1)}},
                               Json{{"role", "user"}, {"content", filler(40, 2)}}});
  for (int t = 0; t < turns; ++t) {
    Turn turn;
    turn.body = turn_body(messages);
    auto r = h.post("/v1/chat/completions", turn.body.dump());
    EXPECT_TRUE(r);
    if (!r) return out;
    EXPECT_EQ(r->status, 200) << r->body;
    const Json j = parse_json(r->body);
    turn.answer = j["choices"][0];
    turn.usage = j["usage"];
    Json assistant = {{"role", "assistant"}, {"content", turn.answer["message"]["content"]}};
    messages.push_back(assistant);
    messages.push_back(Json{{"role", "user"}, {"content", filler(120, 3 + t)}});
    out.push_back(std::move(turn));
  }
  return out;
}

TEST(HttpCache, AConversationAnswersTheSameWithCachesOnAndOff) {
  constexpr int kTurns = 4;
  std::vector<Turn> on;
  {
    ServerHarness h(cache_options(true));
    ASSERT_TRUE(h.ok());
    on = play(h, kTurns);
  }
  std::vector<Turn> off;
  {
    ServerHarness h(cache_options(false));
    ASSERT_TRUE(h.ok());
    off = play(h, kTurns);
  }
  ASSERT_EQ(on.size(), size_t(kTurns));
  ASSERT_EQ(off.size(), size_t(kTurns));
  int64_t last_cached = -1;
  for (int t = 0; t < kTurns; ++t) {
    SCOPED_TRACE("turn " + std::to_string(t + 1));
    // Same request bodies (the answers fed back were the same), same answers: the logprobs
    // are printed as shortest round-trip f32, so equal text is equal bits.
    EXPECT_EQ(on[t].body.dump(), off[t].body.dump());
    EXPECT_EQ(on[t].answer.dump(), off[t].answer.dump());
    EXPECT_EQ(on[t].usage["prompt_tokens"], off[t].usage["prompt_tokens"]);
    EXPECT_EQ(off[t].usage["prompt_tokens_details"]["cached_tokens"], 0);
    const Json& c = on[t].usage["anchorage"]["cache"];
    const int64_t cached = on[t].usage["prompt_tokens_details"]["cached_tokens"];
    EXPECT_EQ(c["cached"], cached);
    EXPECT_EQ(c["reread"].get<int64_t>() + cached, on[t].usage["prompt_tokens"].get<int64_t>());
    EXPECT_EQ(c["exact"], true);
    if (t == 0) {
      EXPECT_EQ(cached, 0);
      EXPECT_EQ(c["source"], "cold");
    } else {
      // Every later turn resumes at least at the end of the previous prefill (an anchor
      // there), so the cached part grows with the conversation.
      EXPECT_NE(c["source"], "cold");
      EXPECT_GE(cached, on[t - 1].usage["prompt_tokens"].get<int64_t>() - 8);
      EXPECT_GT(cached, last_cached);
    }
    last_cached = cached;
  }
}

TEST(HttpCache, PeekPredictsTheNextTurnAndStatsCountIt) {
  ServerHarness h(cache_options(true));
  ASSERT_TRUE(h.ok());
  std::vector<Turn> turns = play(h, 1);
  ASSERT_EQ(turns.size(), 1u);
  Json messages = turns[0].body["messages"];
  messages.push_back(
      Json{{"role", "assistant"}, {"content", turns[0].answer["message"]["content"]}});
  messages.push_back(Json{{"role", "user"}, {"content", filler(60, 9)}});
  const Json next = turn_body(messages);
  auto p = h.post("/v1/cache/peek", next.dump());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body;
  const Json peek = parse_json(p->body);
  auto r = h.post("/v1/chat/completions", next.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json u = parse_json(r->body)["usage"];
  EXPECT_EQ(peek["tokens"], u["prompt_tokens"]);
  EXPECT_EQ(peek["cached_tokens"], u["prompt_tokens_details"]["cached_tokens"]);
  EXPECT_EQ(peek["reread_tokens"], u["anchorage"]["cache"]["reread"]);
  EXPECT_EQ(peek["source"], u["anchorage"]["cache"]["source"]);
  EXPECT_GT(peek["cached_tokens"].get<int64_t>(), 0);

  auto s = h.client().Get("/v1/cache/stats");
  ASSERT_TRUE(s);
  const Json stats = parse_json(s->body);
  const Json& res = stats["resident"];
  EXPECT_EQ(res["cold"], 1);
  EXPECT_EQ(res["hits_anchor"].get<int64_t>() + res["hits_end"].get<int64_t>() +
                res["other_tier"].get<int64_t>(),
            1);
  EXPECT_GT(res["anchor_bytes"].get<int64_t>(), 0);
}

TEST(HttpCache, AnIdenticalGreedyRequestIsServedFromTheResponseCache) {
  ServerOptions o = cache_options(true);
  o.cache.response_cache = true;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  const Json body = turn_body(Json::array({Json{{"role", "user"}, {"content", filler(50, 4)}}}));
  auto first = h.post("/v1/chat/completions", body.dump());
  auto second = h.post("/v1/chat/completions", body.dump());
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->status, 200);
  ASSERT_EQ(second->status, 200);
  const Json a = parse_json(first->body);
  const Json b = parse_json(second->body);
  EXPECT_EQ(a["choices"][0].dump(), b["choices"][0].dump());
  EXPECT_EQ(a["usage"]["anchorage"]["cache"]["tier"], "none");
  EXPECT_EQ(b["usage"]["anchorage"]["cache"]["tier"], "response");
}

TEST(HttpCache, APrefillOverTheMemoryPeakGets503WithRetryAfter) {
  ServerOptions o = cache_options(true);
  o.cache.budget.ceiling_bytes = 1;  // below the engine's own bytes: nothing fits
  o.cache.budget.peak_bytes = 1;
  o.cache.budget.slack_bytes = 0;
  ServerHarness h(o);
  ASSERT_TRUE(h.ok());
  auto r = h.post("/v1/chat/completions",
                  turn_body(Json::array({Json{{"role", "user"}, {"content", "hi"}}})).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_FALSE(r->get_header_value("Retry-After").empty());
  // The server still answers: the refusal lost nothing.
  auto s = h.client().Get("/v1/cache/stats");
  ASSERT_TRUE(s);
  EXPECT_EQ(parse_json(s->body)["memory"]["refusals"], 1);
}

}  // namespace
}  // namespace anchorage::server::testing

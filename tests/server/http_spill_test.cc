// The session spill through the HTTP API (issue 11 §5): a server stopped as SIGTERM stops it
// saves the conversation in place, the next server over the same directory reads it back before
// its first request, and the conversation's next turn answers exactly as a --no-cache server
// does; a conversation displaced by another session is read back from the spill when its next
// turn comes, with the same answer as a --no-cache server.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "server/disk_test_support.h"

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

}  // namespace
}  // namespace anchorage::server::testing

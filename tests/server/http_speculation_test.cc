// Speculative decoding over HTTP (docs/speculation.md): a server with --draft lookup, one with
// drafting off and a --no-cache one answer a conversation's turns — the second resumed from the
// caches, so the drafter also sees the cached prefix — with equal messages and logprobs, greedy
// and seeded sampling.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

std::vector<Json> conversation(ServerHarness& h, Json body) {
  std::vector<Json> turns;
  for (int turn = 0; turn < 2; ++turn) {
    auto r = h.post("/v1/chat/completions", body.dump());
    EXPECT_TRUE(r);
    if (!r) return turns;
    EXPECT_EQ(r->status, 200) << r->body;
    const Json j = parse_json(r->body);
    const Json& choice = j["choices"][0];
    turns.push_back(Json{{"message", choice["message"]},
                         {"logprobs", choice["logprobs"]},
                         {"finish_reason", choice["finish_reason"]},
                         {"completion_tokens", j["usage"]["completion_tokens"]}});
    body["messages"].push_back(choice["message"]);
    body["messages"].push_back(Json{{"role", "user"}, {"content", "Again, the same list."}});
  }
  return turns;
}

TEST(HttpSpeculation, DraftingOnOffAndNoCacheAnswerAlike) {
  ServerOptions draft;
  draft.draft_lookup = true;
  draft.draft.draft_max = 4;
  draft.draft.min_match = 1;  // draft at every repeated token: as many blocks as possible
  ServerOptions plain;
  plain.draft_lookup = false;
  ServerOptions no_cache;
  no_cache.cache.enabled = false;
  no_cache.draft_lookup = false;
  ServerHarness hd(draft), hp(plain), hn(no_cache);
  ASSERT_TRUE(hd.ok() && hp.ok() && hn.ok());

  Json greedy = chat_body("List the numbers one two three one two three one two three.", 40);
  greedy["logprobs"] = true;
  greedy["top_logprobs"] = 2;
  Json seeded = greedy;
  seeded["temperature"] = 0.8;
  seeded["top_k"] = 40;
  seeded["seed"] = 77;
  for (const Json& body : {greedy, seeded}) {
    const std::vector<Json> d = conversation(hd, body);
    const std::vector<Json> p = conversation(hp, body);
    const std::vector<Json> n = conversation(hn, body);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d, p);
    EXPECT_EQ(d, n);
    EXPECT_GT(d[0]["completion_tokens"].get<int64_t>(), 0);
  }
}

}  // namespace
}  // namespace anchorage::server::testing

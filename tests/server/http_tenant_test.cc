// Keys and tenants through the HTTP API (issue 13 §2): the cache side channel. Tenant A sends a
// prompt with a secret; tenant B guesses A's prompt and asks the caches how much of it they
// hold, through POST /v1/cache/peek and through usage.cached_tokens. Under --cache-scope
// tenant B learns 0; under global scope the same probe learns the count (so the test can
// fail). A tenant's own follow-up turns still resume, the server-wide figures need the admin
// token, and a --no-cache server and a caches-on one under keys answer the same tokens and
// logprobs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/disk_test_support.h"
#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

const HttpHeaders kTenantA = {{"Authorization", "Bearer sk-alice"}};
const HttpHeaders kTenantB = {{"Authorization", "Bearer sk-bob"}};
const HttpHeaders kAdmin = {{"Authorization", "Bearer sk-admin"}};

// Deterministic filler (no user data), shared with the disk tests.
std::string filler(int words, int salt) {
  return disk_filler(words, salt);
}

ServerOptions keyed(bool caches, bool tenant_scope) {
  ServerOptions o;
  o.api_keys = {{"sk-alice", "alice"}, {"sk-bob", "bob"}};
  o.admin_token = "sk-admin";
  o.cache.enabled = caches;
  o.cache.tenant_scope = tenant_scope;
  o.cache.disk_root.clear();
  return o;
}

// A's conversation: a long shared-looking preamble, then the secret.
Json secret_messages(const std::string& pin) {
  return Json::array(
      {Json{{"role", "system"}, {"content", filler(700, 1)}},
       Json{{"role", "user"}, {"content", "My PIN is " + pin + ". " + filler(60, 2)}}});
}

Json chat_body(const Json& messages) {
  return Json{{"model", "anchorage-tiny"}, {"messages", messages}, {"max_tokens", 4},
              {"temperature", 0},          {"logprobs", true},     {"top_logprobs", 2}};
}

Json post_json(ServerHarness& h, const std::string& path, const Json& body,
               const HttpHeaders& who) {
  auto r = h.post(path, body.dump(), who);
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << path << ": " << r->body;
  return parse_json(r->body);
}

int64_t cached_of(const Json& response) {
  return response["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
}

struct Probe {
  int64_t peek_cached = -1;
  int64_t usage_cached = -1;
  int64_t a_prompt_tokens = 0;
};

// A sends its secret; B probes with the right guess (first the peek, then a chat, whose usage
// says what it resumed from).
Probe pin_oracle(bool tenant_scope, ResumePolicy policy = ResumePolicy::kExact,
                 const std::string& disk_root = "") {
  ServerOptions o = keyed(true, tenant_scope);
  o.cache.resume_policy = policy;
  o.cache.disk_root = disk_root;
  o.cache.disk.admission.min_tokens = 256;
  o.cache.disk.min_free_bytes = 0;
  ServerHarness h(o);
  Probe p;
  if (!h.ok()) return p;
  const Json a = post_json(h, "/v1/chat/completions", chat_body(secret_messages("4821")), kTenantA);
  p.a_prompt_tokens = a["usage"]["prompt_tokens"].get<int64_t>();
  const Json guess = chat_body(secret_messages("4821"));
  p.peek_cached = post_json(h, "/v1/cache/peek", guess, kTenantB)["cached_tokens"].get<int64_t>();
  p.usage_cached = cached_of(post_json(h, "/v1/chat/completions", guess, kTenantB));
  return p;
}

TEST(HttpTenant, UnderTenantScopeAGuessedPromptLearnsNothing) {
  const Probe p = pin_oracle(/*tenant_scope=*/true);
  ASSERT_GT(p.a_prompt_tokens, 600);
  EXPECT_EQ(p.peek_cached, 0);
  EXPECT_EQ(p.usage_cached, 0);
}

// The same probe under global scope learns how much of A's prompt is cached: the oracle the
// tenant scope closes (and proof that the test above could fail).
TEST(HttpTenant, UnderGlobalScopeTheSameProbeLearnsTheCount) {
  const Probe p = pin_oracle(/*tenant_scope=*/false);
  ASSERT_GT(p.a_prompt_tokens, 600);
  EXPECT_GT(p.peek_cached, 256);
  EXPECT_GT(p.usage_cached, 256);
}

// The same oracle with the disk tier and the session spill attached and under the rows policy
// (whose text alignment would serve the rows' tokens): every tier is asked through the one
// scope.
TEST(HttpTenant, TheOracleStaysClosedWithTheDiskTierAndTheRowsPolicy) {
  for (const ResumePolicy policy : {ResumePolicy::kExact, ResumePolicy::kRows}) {
    SCOPED_TRACE(std::string(resume_policy_name(policy)));
    TempDir closed_dir, open_dir;
    const Probe closed = pin_oracle(true, policy, closed_dir.path);
    ASSERT_GT(closed.a_prompt_tokens, 600);
    EXPECT_EQ(closed.peek_cached, 0);
    EXPECT_EQ(closed.usage_cached, 0);
    const Probe open = pin_oracle(false, policy, open_dir.path);
    EXPECT_GT(open.peek_cached, 256);
    EXPECT_GT(open.usage_cached, 256);
  }
}

// A tenant's own turns resume, also after another tenant's request took the rows; the other
// tenant's request with the same prefix is served cold.
TEST(HttpTenant, ATenantsOwnTurnsStillResume) {
  ServerHarness h(keyed(true, true));
  ASSERT_TRUE(h.ok());
  Json messages = secret_messages("1234");
  const Json t1 = post_json(h, "/v1/chat/completions", chat_body(messages), kTenantA);
  EXPECT_EQ(cached_of(t1), 0);
  messages.push_back(
      Json{{"role", "assistant"}, {"content", t1["choices"][0]["message"]["content"]}});
  messages.push_back(Json{{"role", "user"}, {"content", filler(50, 5)}});
  // Peek and chat agree for A's own next turn: it resumes past its first prompt.
  const int64_t peeked =
      post_json(h, "/v1/cache/peek", chat_body(messages), kTenantA)["cached_tokens"];
  const Json t2 = post_json(h, "/v1/chat/completions", chat_body(messages), kTenantA);
  EXPECT_GT(cached_of(t2), 256);
  EXPECT_EQ(cached_of(t2), peeked);
  // B sends a conversation of its own that takes the rows, then A goes on: A still resumes
  // (from a tier that kept its state), B's own second turn too.
  Json b_messages = Json::array({Json{{"role", "user"}, {"content", filler(400, 9)}}});
  const Json b1 = post_json(h, "/v1/chat/completions", chat_body(b_messages), kTenantB);
  EXPECT_EQ(cached_of(b1), 0);
  messages.push_back(
      Json{{"role", "assistant"}, {"content", t2["choices"][0]["message"]["content"]}});
  messages.push_back(Json{{"role", "user"}, {"content", filler(30, 6)}});
  const Json t3 = post_json(h, "/v1/chat/completions", chat_body(messages), kTenantA);
  EXPECT_GT(cached_of(t3), 256);
  b_messages.push_back(
      Json{{"role", "assistant"}, {"content", b1["choices"][0]["message"]["content"]}});
  b_messages.push_back(Json{{"role", "user"}, {"content", filler(20, 4)}});
  const Json b2 = post_json(h, "/v1/chat/completions", chat_body(b_messages), kTenantB);
  EXPECT_GT(cached_of(b2), 256);
}

// Under tenant scope the server-wide cache figures are the admin's: a tenant's key gets 403 on
// /v1/cache/stats, and /health (no key) shows no figure.
TEST(HttpTenant, ServerWideFiguresNeedTheAdminToken) {
  ServerHarness h(keyed(true, true));
  ASSERT_TRUE(h.ok());
  auto c = h.client();
  auto r = c.Get("/v1/cache/stats", kTenantA);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  r = c.Get("/v1/cache/stats", kAdmin);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/health");
  ASSERT_TRUE(r);
  const Json health = parse_json(r->body);
  EXPECT_EQ(health["cache"]["enabled"], true);
  EXPECT_FALSE(health["cache"].contains("resident_tokens")) << health;
  r = c.Get("/metrics", kTenantB);
  ASSERT_TRUE(r);
  // The tiers' figures (append_prometheus); the request counters stay.
  EXPECT_EQ(r->body.find("anchorage_cache_resident_"), std::string::npos);
  r = c.Get("/metrics", kAdmin);
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("anchorage_cache_resident_"), std::string::npos);
}

// Two tenants' interleaved conversations answer the same tokens and logprobs with the caches
// on (tenant scope) as with every tier off.
std::vector<Json> interleaved(ServerHarness& h) {
  std::vector<Json> out;
  Json a = secret_messages("5555");
  Json b = secret_messages("5555");  // the same prompt: B must not be served from A's states
  for (int t = 0; t < 3; ++t) {
    for (auto [messages, who] : {std::pair{&a, &kTenantA}, std::pair{&b, &kTenantB}}) {
      const Json r = post_json(h, "/v1/chat/completions", chat_body(*messages), *who);
      out.push_back(r["choices"][0]);
      out.push_back(r["usage"]["prompt_tokens"]);
      messages->push_back(
          Json{{"role", "assistant"}, {"content", r["choices"][0]["message"]["content"]}});
      messages->push_back(Json{{"role", "user"}, {"content", filler(40, 10 + t)}});
    }
  }
  return out;
}

TEST(HttpTenant, CachesOnAnswerAsNoCacheUnderKeys) {
  std::vector<Json> on, off;
  {
    ServerHarness h(keyed(true, true));
    ASSERT_TRUE(h.ok());
    on = interleaved(h);
  }
  {
    ServerHarness h(keyed(false, true));
    ASSERT_TRUE(h.ok());
    off = interleaved(h);
  }
  ASSERT_EQ(on.size(), off.size());
  ASSERT_EQ(on.size(), 12u);
  for (size_t i = 0; i < on.size(); ++i) {
    // Logprobs are printed as shortest round-trip f32: equal text is equal bits.
    EXPECT_EQ(on[i].dump(), off[i].dump()) << "response " << i / 2;
  }
}

}  // namespace
}  // namespace anchorage::server::testing

// The persistent suffix store in the server (docs/suffix-store.md, docs/speculation.md): a
// request that repeats an earlier request's output drafts it from the store (counted on
// /health and /metrics) and answers as a --no-cache, --draft off server does, greedy and seeded;
// the append rule, scope outputs and read-only mode as the server drives them; a torn tail left
// by a killed writer is truncated and counted at the next start; another tokenizer's store is
// refused; the directory is 0700 and the log 0600.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "cache/suffix_log.h"
#include "core/sha256.h"
#include "disk_test_support.h"

namespace anchorage::server::testing {
namespace {

// 60 distinct ids: the request's own context has nothing to draft from.
std::vector<int32_t> distinct_prompt(int32_t base) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 60; ++i) ids.push_back(base + 7 * i);
  return ids;
}

Json completion_body(const std::vector<int32_t>& prompt, bool seeded) {
  Json body = {
      {"model", "anchorage-tiny"}, {"prompt", prompt}, {"max_tokens", 40}, {"logprobs", 2}};
  if (seeded) {
    body["temperature"] = 0.8;
    body["top_k"] = 40;
    body["seed"] = 77;
  } else {
    body["temperature"] = 0.0;
  }
  return body;
}

// The answer's text, logprobs and finish reason, and its usage.
Json complete(ServerHarness& h, const Json& body) {
  auto r = h.post("/v1/completions", body.dump());
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  const Json j = parse_json(r->body);
  return Json{{"text", j["choices"][0]["text"]},
              {"logprobs", j["choices"][0]["logprobs"]},
              {"finish_reason", j["choices"][0]["finish_reason"]},
              {"completion_tokens", j["usage"]["completion_tokens"]}};
}

Json health(ServerHarness& h) {
  auto r = h.client().Get("/health");
  EXPECT_TRUE(r);
  return r ? parse_json(r->body)["suffix_store"] : Json();
}

// Waits until the store's figures satisfy `done` (the store is fed after the answer and indexes
// on its own thread); the figures then.
template <typename Done>
Json store_when(ServerHarness& h, Done done) {
  Json s;
  for (int i = 0; i < 3000; ++i) {
    s = health(h);
    if (done(s)) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the store never got there: " << s.dump();
  return s;
}

// Waits until the store has indexed all of its `tokens` tokens.
Json indexed(ServerHarness& h, uint64_t tokens) {
  return store_when(h, [tokens](const Json& s) {
    return s.value("indexed_tokens", uint64_t(0)) == tokens &&
           s.value("tokens", uint64_t(0)) == tokens;
  });
}

ServerOptions store_options(const std::string& dir) {
  ServerOptions o;
  o.cache.disk_root = dir;
  o.draft_lookup = true;
  o.draft.draft_max = 8;
  o.draft.min_match = 3;
  return o;
}

std::string log_path(const std::string& dir) {
  return dir + "/suffix/tokens.log";
}

TEST(HttpSuffixStore, ARepeatedOutputIsDraftedFromTheStoreAndAnswersAsNoCacheDraftOff) {
  for (bool seeded : {false, true}) {
    SCOPED_TRACE(seeded ? "seeded" : "greedy");
    TempDir dir;
    ServerOptions plain = no_cache_options();
    plain.draft_lookup = false;
    ServerHarness hs(store_options(dir.path)), hn(plain);
    ASSERT_TRUE(hs.ok() && hn.ok());
    const std::vector<int32_t> prompt = distinct_prompt(1000);
    const Json body = completion_body(prompt, seeded);
    const Json first = complete(hs, body);
    const int64_t n = first["completion_tokens"].get<int64_t>();
    ASSERT_GT(n, 8);
    Json s = indexed(hs, prompt.size() + uint64_t(n));
    EXPECT_TRUE(s["enabled"].get<bool>());
    EXPECT_EQ(s["documents"], 1);
    EXPECT_GE(s["rebuilds"].get<int64_t>(), 2);  // the empty store's, then this one's
    EXPECT_GE(s["rebuild_ms_total"].get<double>(), s["last_rebuild_ms"].get<double>());
    EXPECT_EQ(s["log_bytes"], 64 + 8 + 4 * (prompt.size() + uint64_t(n)));
    EXPECT_EQ(s["draft_blocks"], 0);  // nothing was in the store yet

    const Json second = complete(hs, body);
    // The same sequence again appends nothing (the append rule).
    s = store_when(hs, [](const Json& j) { return j.value("deduplicated_tokens", 0) > 0; });
    EXPECT_EQ(s["deduplicated_tokens"], prompt.size() + uint64_t(n));
    EXPECT_EQ(s["appended_tokens"], prompt.size() + uint64_t(n));
    EXPECT_GT(s["draft_blocks"].get<int64_t>(), 0);
    EXPECT_GT(s["accepted_tokens"].get<int64_t>(), n / 2);
    auto m = hs.client().Get("/metrics");
    ASSERT_TRUE(m);
    EXPECT_NE(m->body.find("anchorage_draft_accepted_tokens_total{source=\"suffix_store\"} " +
                           std::to_string(s["accepted_tokens"].get<int64_t>())),
              std::string::npos);

    EXPECT_EQ(first, complete(hn, body));
    EXPECT_EQ(second, complete(hn, body));
    EXPECT_EQ(first, second);
  }
}

TEST(HttpSuffixStore, ScopeOutputsReadOnlyTornTailTokenizerAndModes) {
  TempDir dir;
  const std::vector<int32_t> prompt = distinct_prompt(2000);
  const Json body = completion_body(prompt, false);
  uint64_t outputs = 0;
  {  // Scope outputs: only what the model wrote.
    ServerOptions o = store_options(dir.path);
    o.suffix.scope = cache::SuffixScope::kOutputs;
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    outputs = uint64_t(complete(h, body)["completion_tokens"].get<int64_t>());
    ASSERT_GT(outputs, 0u);
    indexed(h, outputs);
  }
  struct stat st {};
  ASSERT_EQ(::stat((dir.path + "/suffix").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(log_path(dir.path).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto log_size = uint64_t(st.st_size);
  EXPECT_EQ(log_size, 64 + 8 + 4 * outputs);

  {  // Read-only: drafts from the store, appends nothing, the file untouched.
    ServerOptions o = store_options(dir.path);
    o.suffix.read_only = true;
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    const Json s0 = indexed(h, outputs);
    EXPECT_TRUE(s0["read_only"].get<bool>());
    complete(h, completion_body(distinct_prompt(3000), false));
    const Json s = store_when(h, [](const Json& j) { return j.value("refused_requests", 0) == 1; });
    EXPECT_EQ(s["tokens"], outputs);
    EXPECT_EQ(s["appended_tokens"], 0);
  }
  ASSERT_EQ(::stat(log_path(dir.path).c_str(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), log_size);

  // A writer killed inside an append leaves a record cut short: a length of 10 ids, 3 written.
  {
    std::ofstream f(log_path(dir.path), std::ios::binary | std::ios::app);
    const char torn[4 + 4 + 12] = {10};
    f.write(torn, sizeof(torn));
  }
  {
    ServerHarness h(store_options(dir.path));
    ASSERT_TRUE(h.ok());
    const Json s = indexed(h, outputs);
    EXPECT_EQ(s["torn_tails"], 1);
    EXPECT_EQ(s["corrupt_deleted"], 0);
  }
  ASSERT_EQ(::stat(log_path(dir.path).c_str(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), log_size);  // truncated to the last whole record

  // A store written for another tokenizer: the server runs without one, the file kept.
  {
    const auto header = cache::encode_suffix_log_header(core::sha256(std::string_view("other")));
    std::ofstream f(log_path(dir.path), std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
  }
  {
    ServerHarness h(store_options(dir.path));
    ASSERT_TRUE(h.ok());
    EXPECT_FALSE(health(h)["enabled"].get<bool>());
    EXPECT_EQ(complete(h, body)["finish_reason"], "length");
  }
  ASSERT_EQ(::stat(log_path(dir.path).c_str(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), 64u);
}

}  // namespace
}  // namespace anchorage::server::testing

// The disk tier through the HTTP API (issue 10 §4): a session's head written by one server is
// read by the next server over the same directory (a restart), which answers exactly as a
// --no-cache server does; a corrupt file is deleted and the request answered as cold; the
// clear route empties the tier; /health and /metrics show it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "server/disk_test_support.h"

namespace anchorage::server::testing {
namespace {

// An opencode-shaped first request: a long system text (the tools and instructions), then the
// folder's environment block, then the user's message.
Json first_request(const std::string& folder, int user_salt) {
  Json b = Json::object();
  b["model"] = "anchorage-tiny";
  b["messages"] = Json::array(
      {Json{{"role", "system"},
            {"content", disk_filler(1400, 1) + "\n<env>\nWorking directory: /home/dev/" + folder +
                            "\n</env>\n" + disk_filler(200, 2)}},
       Json{{"role", "user"}, {"content", disk_filler(30, user_salt)}}});
  b["max_tokens"] = 5;
  b["temperature"] = 0;
  b["logprobs"] = true;
  b["top_logprobs"] = 2;
  return b;
}

ServerOptions disk_options(const std::string& root) {
  ServerOptions o;
  o.cache.disk_root = root;
  o.cache.disk.admission.min_tokens = 256;
  o.cache.disk.min_free_bytes = 0;
  o.cache.spill = false;  // the tier alone (http_spill_test.cc has the spill)
  return o;
}

TEST(HttpDisk, AHeadSurvivesARestartAndAnswersAsANoCacheServer) {
  TempDir dir;
  const Json body = first_request("alpha", 3);
  int64_t prompt_tokens = 0;
  {
    ServerHarness h(disk_options(dir.path));
    ASSERT_TRUE(h.ok());
    const Json a = post_chat(h, body, "session-1");
    prompt_tokens = a["usage"]["prompt_tokens"].get<int64_t>();
    ASSERT_GT(prompt_tokens, 1024);
  }  // the server stops; its writer finished first
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  const Json want = post_chat(cold, body, "session-x");
  auto restarted = std::make_unique<ServerHarness>(disk_options(dir.path));
  ServerHarness& h = *restarted;
  ASSERT_TRUE(h.ok());
  const Json st = cache_stats(h)["disk"];
  EXPECT_EQ(st["enabled"], true);
  EXPECT_GT(st["anchors"].get<int64_t>(), 0);
  const Json b = post_chat(h, body, "session-2");
  const Json cache = b["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["tier"], "disk_tier");
  EXPECT_EQ(cache["source"], "disk");
  EXPECT_EQ(cache["exact"], true);
  EXPECT_EQ(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            prompt_tokens - 1);  // the anchor at the head's last token
  EXPECT_EQ(b["choices"][0].dump(), want["choices"][0].dump());
  // /health and /metrics show the tier.
  auto health = h.client().Get("/health");
  ASSERT_TRUE(health);
  const Json hc = parse_json(health->body)["cache"];
  EXPECT_EQ(hc["disk"]["enabled"], true);
  // The first server's writes are today's, kept across the restart by the write guard.
  EXPECT_EQ(hc["disk_writes"]["level"], "ok");
  EXPECT_GT(hc["disk_writes"]["tier_gb"].get<double>(), 0.0);
  EXPECT_EQ(hc["disk_writes"]["budget_gb"].get<double>(), 200.0);
  auto metrics = h.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("anchorage_disk_hits_total 1"), std::string::npos);
  // The peek route, for a third session with the same head after another restart (the rows in
  // place would answer first): the disk, with its read's cost.
  restarted.reset();
  ServerHarness again(disk_options(dir.path));
  ASSERT_TRUE(again.ok());
  auto peek = again.client().Post("/v1/cache/peek", body.dump(), "application/json");
  ASSERT_TRUE(peek);
  ASSERT_EQ(peek->status, 200) << peek->body;
  const Json p = parse_json(peek->body);
  EXPECT_EQ(p["tier"], "disk_tier");
  EXPECT_EQ(p["cached_tokens"].get<int64_t>(), prompt_tokens - 1);
  EXPECT_GT(p["restore_ms"].get<double>(), 0.0);
  EXPECT_GE(p["reread_eta_ms"].get<double>(), p["restore_ms"].get<double>());
}

// The seed's scenario without the deploy (tests/cache/disk_tier_test.cc has the deploy): two
// sessions in two folders, a restart, a third session in the first folder writes the line
// where the folders part, and a fourth in a new folder resumes there from the disk and answers
// as a cold server.
TEST(HttpDisk, ANewFolderResumesAtTheBranchLineAfterARestart) {
  TempDir dir;
  {
    ServerHarness h(disk_options(dir.path));
    ASSERT_TRUE(h.ok());
    post_chat(h, first_request("alpha", 3), "s1");
    post_chat(h, first_request("bravo", 4), "s2");
  }
  {
    ServerHarness h(disk_options(dir.path));
    ASSERT_TRUE(h.ok());
    post_chat(h, first_request("alpha", 5), "s3");
  }
  ServerHarness h(disk_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json body = first_request("charlie", 6);
  const Json got = post_chat(h, body, "s4");
  const Json cache = got["usage"]["anchorage"]["cache"];
  EXPECT_EQ(cache["source"], "disk");
  const int64_t cached = got["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
  EXPECT_GT(cached, 0);
  EXPECT_EQ(cached % 1024, 0);  // a grid line: the branch line below the folders' parting
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ(got["choices"][0].dump(), post_chat(cold, body, "sx")["choices"][0].dump());
}

TEST(HttpDisk, ACorruptFileIsDeletedAndTheRequestAnsweredAsCold) {
  TempDir dir;
  const Json body = first_request("delta", 7);
  {
    ServerHarness h(disk_options(dir.path));
    ASSERT_TRUE(h.ok());
    post_chat(h, body, "s1");
  }
  // Flip one byte near the end of every anchor file (inside its last section).
  int flipped = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path + "/disk")) {
    if (e.path().extension() != ".anchor") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(-100, std::ios::end);
    f.write(&c, 1);
    ++flipped;
  }
  ASSERT_GT(flipped, 0);
  ServerHarness cold(no_cache_options());
  ASSERT_TRUE(cold.ok());
  const Json want = post_chat(cold, body, "sx");
  ServerHarness h(disk_options(dir.path));
  ASSERT_TRUE(h.ok());
  const Json got = post_chat(h, body, "s2");
  EXPECT_EQ(got["usage"]["anchorage"]["cache"]["source"], "cold");
  EXPECT_EQ(got["choices"][0].dump(), want["choices"][0].dump());
  const Json st = cache_stats(h)["disk"];
  EXPECT_GT(st["corrupt_files"].get<int64_t>(), 0);
  EXPECT_GT(st["restore_failures"].get<int64_t>(), 0);
  auto metrics = h.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(
      metrics->body.find("anchorage_cache_corrupt_total{tier=\"disk\",reason=\"section_crc\"} "),
      std::string::npos);
  EXPECT_EQ(
      metrics->body.find("anchorage_cache_corrupt_total{tier=\"disk\",reason=\"section_crc\"} 0"),
      std::string::npos);
}

// The admission counts outlive the process even when a request writes no file: a head read
// cold once before a restart and once after is admitted at the second read (no session key,
// so no head anchors: only the counts can admit it).
TEST(HttpDisk, ColdReadsBeforeARestartCountTowardsAdmission) {
  TempDir dir;
  auto post_plain = [](ServerHarness& h, const Json& body) {
    auto r = h.client().Post("/v1/chat/completions", body.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  };
  {
    ServerHarness h(disk_options(dir.path));
    ASSERT_TRUE(h.ok());
    post_plain(h, first_request("foxtrot", 11));
    EXPECT_EQ(cache_stats(h)["disk"]["anchors"], 0);
  }
  ServerHarness h(disk_options(dir.path));
  ASSERT_TRUE(h.ok());
  post_plain(h, first_request("foxtrot", 12));
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cache_stats(h)["disk"]["anchors"].get<int64_t>() == 0 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(cache_stats(h)["disk"]["anchors"].get<int64_t>(), 0);
}

// One server per directory: a second one on the same directory runs without the disk tier
// (and says so) rather than sweeping or evicting the first one's files.
TEST(HttpDisk, ASecondServerOnTheSameDirectoryRunsWithoutTheTier) {
  TempDir dir;
  ServerHarness first(disk_options(dir.path));
  ASSERT_TRUE(first.ok());
  ServerHarness second(disk_options(dir.path));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(cache_stats(first)["disk"]["enabled"], true);
  EXPECT_EQ(cache_stats(second)["disk"]["enabled"], false);
}

TEST(HttpDisk, ClearTierDiskEmptiesItAndAnUnknownTierIsRefused) {
  TempDir dir;
  ServerHarness h(disk_options(dir.path));
  ASSERT_TRUE(h.ok());
  post_chat(h, first_request("echo", 8), "s1");
  auto bad = h.client().Post("/v1/cache/clear?tier=nvme", "", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("tier"), std::string::npos);
  auto r = h.client().Post("/v1/cache/clear?tier=disk", "", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json st = cache_stats(h)["disk"];
  EXPECT_EQ(st["anchors"], 0);
  EXPECT_EQ(st["chunks"], 0);
  EXPECT_EQ(st["counted_lines"], 0);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path + "/disk")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 0);
}

}  // namespace
}  // namespace anchorage::server::testing

// What the HTTP tests of the disk tiers share (http_disk_test.cc, http_spill_test.cc):
// deterministic filler text (no user data), a temporary cache directory, the --no-cache
// options the answers are compared with, and a chat POST under a session key.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "server/server_harness.h"

namespace anchorage::server::testing {

// Roughly `words` words of opencode-ish vocabulary; `salt` picks the order.
inline std::string disk_filler(int words, int salt) {
  static const char* kWords[] = {"read", "write", "edit", "glob",  "grep",
                                 "bash", "task",  "todo", "fetch", "patch"};
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kWords[(i * 3 + salt) % 10];
    out += (i % 10 == 9) ? ".\n" : " ";
  }
  return out;
}

// A fresh directory under /tmp, removed with everything in it at the end of the scope.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/anchorage-disk-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

inline ServerOptions no_cache_options() {
  ServerOptions o;
  o.cache.enabled = false;
  return o;
}

// POSTs a chat body under the session key; the parsed answer (a test failure unless 200).
inline Json post_chat(ServerHarness& h, const Json& body, const std::string& session) {
  HttpHeaders headers = {{"x-session-id", session}};
  auto r = h.client().Post("/v1/chat/completions", headers, body.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  return parse_json(r->body);
}

// GET /v1/cache/stats, parsed (null when the request failed).
inline Json cache_stats(ServerHarness& h) {
  auto s = h.client().Get("/v1/cache/stats");
  return s ? parse_json(s->body) : Json();
}

}  // namespace anchorage::server::testing

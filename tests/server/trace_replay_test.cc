// Every opencode request body of the traces (tests/corpus/chat_requests/, copied from
// ../shared/traces/) replayed against the server, streamed as sent and with opencode's
// x-session-id header: each succeeds with a well-formed SSE stream, a finish reason, a usage
// chunk and [DONE]. Only max_tokens is lowered (4096 random tokens per request would make
// this test minutes long; the prompt, which is what the traces exercise, is unchanged).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

TEST(TraceReplay, EveryOpencodeBodySucceeds) {
  ServerHarness h;
  ASSERT_TRUE(h.ok());
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(ANCHORAGE_SOURCE_DIR) / "tests/corpus/chat_requests")) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 16u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    Json body = parse_json(ss.str());
    body["max_tokens"] = 2;
    const ServerHarness::Streamed res = h.post_streamed("/v1/chat/completions", body.dump(),
                                                        nullptr, {{"X-Session-Id", "ses_replay"}});
    const std::string& got = res.body;
    ASSERT_EQ(res.status, 200) << got.substr(0, 300);
    const auto events = sse_data(got);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.back(), "[DONE]");
    const Json usage_chunk = parse_json(events[events.size() - 2]);
    const Json& usage = usage_chunk["usage"];
    EXPECT_GT(usage["prompt_tokens"].get<int>(), 500);
    EXPECT_LE(usage["completion_tokens"].get<int>(), 2);
    EXPECT_EQ(usage["anchorage"]["session"], "header");
    const Json finish = parse_json(events[events.size() - 3]);
    EXPECT_FALSE(finish["choices"][0]["finish_reason"].is_null());
    for (size_t i = 0; i + 1 < events.size(); ++i) {
      EXPECT_FALSE(parse_json(events[i]).contains("error")) << events[i];
    }
  }
}

}  // namespace
}  // namespace anchorage::server::testing

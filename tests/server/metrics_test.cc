// Metrics: every series the docs promise, counted from requests and job outcomes.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace anchorage::server {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Metrics, CountsRequestsTokensAndTimes) {
  Metrics m;
  m.count_request("/v1/chat/completions", 200);
  m.count_request("/v1/chat/completions", 200);
  m.count_request("/v1/chat/completions", 429);
  m.count_queue_full();
  JobOutcome o;
  o.end = JobEnd::kStopToken;
  o.prompt_tokens = 100;
  o.reread_tokens = 100;
  o.completion_tokens = 11;
  o.prefill_ns = 500'000'000;
  o.decode_ns = 1'000'000'000;
  o.first_token_ns = 700'000'000;
  m.observe_job(o);
  o.end = JobEnd::kCancelled;
  o.first_token_ns = 0;
  m.observe_job(o);
  const std::string text = m.render(QueueGauges{3, 8, true});
  EXPECT_TRUE(
      has_line(text, "anchorage_requests_total{route=\"/v1/chat/completions\",status=\"200\"} 2"));
  EXPECT_TRUE(
      has_line(text, "anchorage_requests_total{route=\"/v1/chat/completions\",status=\"429\"} 1"));
  EXPECT_TRUE(has_line(text, "anchorage_queue_full_total 1"));
  EXPECT_TRUE(has_line(text, "anchorage_generations_total{end=\"stop_token\"} 1"));
  EXPECT_TRUE(has_line(text, "anchorage_generations_total{end=\"cancelled\"} 1"));
  EXPECT_TRUE(has_line(text, "anchorage_prompt_tokens_total 200"));
  EXPECT_TRUE(has_line(text, "anchorage_completion_tokens_total 22"));
  EXPECT_TRUE(has_line(text, "anchorage_prefill_tokens_per_second 200.000"));
  EXPECT_TRUE(has_line(text, "anchorage_decode_tokens_per_second 10.000"));
  EXPECT_TRUE(has_line(text, "anchorage_time_to_first_token_seconds_bucket{le=\"0.5\"} 0"));
  EXPECT_TRUE(has_line(text, "anchorage_time_to_first_token_seconds_bucket{le=\"1\"} 1"));
  EXPECT_TRUE(has_line(text, "anchorage_time_to_first_token_seconds_bucket{le=\"+Inf\"} 1"));
  EXPECT_TRUE(has_line(text, "anchorage_time_to_first_token_seconds_count 1"));
  EXPECT_TRUE(has_line(text, "anchorage_queue_depth 3"));
  EXPECT_TRUE(has_line(text, "anchorage_queue_capacity 8"));
  EXPECT_TRUE(has_line(text, "anchorage_engine_busy 1"));
  // Every series has its HELP and TYPE.
  EXPECT_NE(text.find("# TYPE anchorage_time_to_first_token_seconds histogram"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::server

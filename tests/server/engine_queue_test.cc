// EngineQueue: jobs run one at a time in order, a full queue refuses, a cancelled job stops at
// its next token, close() drops waiting jobs, and the same greedy job twice gives the same
// tokens and the same logprob bits (the tiny preset with its own 512-id vocabulary: no
// tokenizer needed here).
#include "server/engine_queue.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/clock.h"
#include "engine/engine.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::server {
namespace {

std::unique_ptr<engine::Engine> tiny_engine() {
  auto cfg = model::qwen35::qwen35_preset("tiny");
  EXPECT_TRUE(cfg.has_value());
  auto arch = model::qwen35::make_random_qwen35(*cfg, 3, {});
  EXPECT_TRUE(arch.has_value());
  engine::EngineOptions o;
  o.capacity = 512;
  o.n_threads = 2;
  auto e = engine::Engine::create(std::move(arch.value()), o);
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

GenerationJob job(int64_t max_tokens, int top_logprobs = -1) {
  GenerationJob j;
  j.prompt = {1, 2, 3, 4, 5, 6, 7};
  j.max_tokens = max_tokens;
  j.top_logprobs = top_logprobs;
  j.submitted_ns = core::now_ns();
  return j;
}

// Waits for the whole job.
JobOutcome drain(TokenStream& s, std::vector<TokenEvent>* events) {
  JobOutcome out;
  while (!s.wait(std::chrono::milliseconds(1000), events, &out)) {
  }
  return out;
}

TEST(EngineQueue, RunsJobsAndReportsOutcomes) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 4, nullptr);
  auto s = q.submit(job(5, 2));
  ASSERT_TRUE(s.has_value());
  std::vector<TokenEvent> events;
  JobOutcome out = drain(**s, &events);
  EXPECT_EQ(out.end, JobEnd::kLength);
  EXPECT_EQ(out.prompt_tokens, 7);
  EXPECT_EQ(out.completion_tokens, 5);
  EXPECT_EQ(out.reread_tokens, 7);
  EXPECT_EQ(out.cached_tokens, 0);
  EXPECT_GT(out.first_token_ns, 0);
  ASSERT_EQ(events.size(), 5u);
  for (const TokenEvent& e : events) {
    EXPECT_LT(e.logprob, 0.0f);
    ASSERT_EQ(e.top.size(), 2u);
    EXPECT_GE(e.top[0].second, e.top[1].second);
  }
}

TEST(EngineQueue, SameGreedyJobTwiceGivesTheSameBits) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 4, nullptr);
  std::vector<TokenEvent> a, b;
  auto s1 = q.submit(job(12, 5));
  auto s2 = q.submit(job(12, 5));
  ASSERT_TRUE(s1 && s2);
  drain(**s1, &a);
  drain(**s2, &b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].token, b[i].token);
    EXPECT_EQ(std::memcmp(&a[i].logprob, &b[i].logprob, sizeof(float)), 0);
    ASSERT_EQ(a[i].top.size(), b[i].top.size());
    for (size_t k = 0; k < a[i].top.size(); ++k) {
      EXPECT_EQ(a[i].top[k].first, b[i].top[k].first);
      EXPECT_EQ(std::memcmp(&a[i].top[k].second, &b[i].top[k].second, sizeof(float)), 0);
    }
  }
}

TEST(EngineQueue, FullQueueRefuses) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 2, nullptr);
  q.test_hold(true);
  auto s1 = q.submit(job(1));
  auto s2 = q.submit(job(1));
  auto s3 = q.submit(job(1));
  ASSERT_TRUE(s1 && s2);
  ASSERT_FALSE(s3.has_value());
  EXPECT_EQ(s3.error().code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(q.depth(), 2u);
  q.test_hold(false);
  std::vector<TokenEvent> events;
  EXPECT_EQ(drain(**s1, &events).end, JobEnd::kLength);
  EXPECT_EQ(drain(**s2, &events).end, JobEnd::kLength);
  EXPECT_TRUE(q.submit(job(1)).has_value());
}

TEST(EngineQueue, CancelStopsAtTheNextToken) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 2, nullptr);
  auto s = q.submit(job(400));
  ASSERT_TRUE(s.has_value());
  // Cancel as soon as the first token is out; the engine checks after every token.
  std::vector<TokenEvent> events;
  JobOutcome out;
  while (events.empty() && !(*s)->wait(std::chrono::milliseconds(1000), &events, &out)) {
  }
  (*s)->cancel();
  out = drain(**s, &events);
  EXPECT_EQ(out.end, JobEnd::kCancelled);
  EXPECT_TRUE(out.status.is_ok());
  EXPECT_LT(out.completion_tokens, 400);
  EXPECT_EQ(size_t(out.completion_tokens), events.size());

  // A job cancelled while it waits never runs.
  q.test_hold(true);
  auto waiting = q.submit(job(5));
  ASSERT_TRUE(waiting.has_value());
  (*waiting)->cancel();
  q.test_hold(false);
  events.clear();
  out = drain(**waiting, &events);
  EXPECT_EQ(out.end, JobEnd::kCancelled);
  EXPECT_EQ(out.completion_tokens, 0);
  EXPECT_TRUE(events.empty());
}

TEST(EngineQueue, StopCheckEndsTheGeneration) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 2, nullptr);
  GenerationJob j = job(50);
  int seen = 0;
  j.stop_after = [&seen](int32_t) { return ++seen == 3; };
  auto s = q.submit(std::move(j));
  ASSERT_TRUE(s.has_value());
  std::vector<TokenEvent> events;
  const JobOutcome out = drain(**s, &events);
  EXPECT_EQ(out.end, JobEnd::kStopString);
  EXPECT_EQ(out.completion_tokens, 3);
}

TEST(EngineQueue, CloseDropsWaitingJobsAndRefusesNewOnes) {
  auto engine = tiny_engine();
  EngineQueue q(*engine, 4, nullptr);
  q.test_hold(true);
  auto s = q.submit(job(5));
  ASSERT_TRUE(s.has_value());
  q.close();
  std::vector<TokenEvent> events;
  const JobOutcome out = drain(**s, &events);
  EXPECT_EQ(out.end, JobEnd::kCancelled);
  EXPECT_EQ(out.status.code(), core::StatusCode::kCancelled);
  auto late = q.submit(job(1));
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(late.error().code(), core::StatusCode::kCancelled);
  q.join();
}

}  // namespace
}  // namespace anchorage::server

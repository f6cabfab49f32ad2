// Metrics: the server's counters for GET /metrics, in the Prometheus text format (0.0.4):
// requests by route and status, tokens, prefill and decode time and rates, time to first
// token (histogram), queue depth, rejections and cancellations. docs/http-api.md lists every
// series. No label ever holds client text (routes are our fixed names).
//
// Thread safety: every method may be called from any thread (one internal mutex; nothing here
// is on a per-token path).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "server/generation_job.h"

namespace anchorage::server {

// Live values read when /metrics is rendered.
struct QueueGauges {
  size_t depth = 0;
  size_t capacity = 0;
  bool running = false;
};

// Speculative decoding's counters since the start (docs/speculation.md): verify blocks, their
// drafted tokens and the drafts chosen; store_*: the part drafted from the suffix store.
struct DraftCounts {
  uint64_t blocks = 0;
  uint64_t drafted_tokens = 0;
  uint64_t accepted_tokens = 0;
  uint64_t store_blocks = 0;
  uint64_t store_drafted_tokens = 0;
  uint64_t store_accepted_tokens = 0;
};

class Metrics {
 public:
  // Upper bounds (seconds) of the time-to-first-token buckets: from a short prompt on a small
  // model (tens of ms) to a cold 128k-token prefill (minutes).
  static constexpr std::array<double, 12> kTtftBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                                          5,    10,  30,   60,  120, 300};

  // An answered request: route is the route's pattern ("/v1/chat/completions"), status the
  // HTTP status sent.
  void count_request(std::string_view route, int status);
  // A job refused because the queue was full (also counted as a 429 request).
  void count_queue_full();
  // A job that ended on the engine thread (or was dropped at shutdown).
  void observe_job(const JobOutcome& outcome);

  std::string render(const QueueGauges& queue) const;
  DraftCounts drafts() const;

 private:
  // render()'s parts, each under mu_.
  void render_requests(std::string* out) const;
  void render_tokens(std::string* out) const;
  void render_drafts(std::string* out) const;
  void render_times(std::string* out) const;
  void render_queue(const QueueGauges& queue, std::string* out) const;

  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  uint64_t queue_full_ = 0;
  std::array<uint64_t, 5> jobs_by_end_{};                                      // indexed by JobEnd
  std::array<uint64_t, cache::kAllResumeSources.size()> resumes_by_source_{};  // by ResumeSource
  uint64_t prompt_tokens_ = 0;
  uint64_t cached_tokens_ = 0;
  uint64_t prefill_tokens_ = 0;  // tokens actually read (prompt - cached)
  uint64_t completion_tokens_ = 0;
  uint64_t decode_steps_ = 0;
  DraftCounts drafts_;
  int64_t prefill_ns_ = 0;
  int64_t decode_ns_ = 0;
  int64_t cache_begin_ns_ = 0;  // JobOutcome's caches' share, summed
  int64_t cache_anchor_ns_ = 0;
  int64_t cache_end_ns_ = 0;
  double last_prefill_tps_ = 0;
  double last_decode_tps_ = 0;
  std::array<uint64_t, kTtftBuckets.size()> ttft_buckets_{};
  uint64_t ttft_count_ = 0;
  double ttft_sum_s_ = 0;
};

}  // namespace anchorage::server

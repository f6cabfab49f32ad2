#include "server/metrics.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "core/status.h"

namespace anchorage::server {
namespace {

void append(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string* out, const char* fmt, ...) {
  char line[256];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  if (n > 0) out->append(line, std::min(size_t(n), sizeof(line) - 1));
}

void header(std::string* out, const char* name, const char* type, const char* help) {
  append(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

// One unlabelled counter: its header and its value.
void counter(std::string* out, const char* name, const char* help, uint64_t value) {
  header(out, name, "counter", help);
  append(out, "%s %llu\n", name, (unsigned long long)value);
}

// One counter of seconds, kept in nanoseconds.
void seconds(std::string* out, const char* name, const char* help, int64_t ns) {
  header(out, name, "counter", help);
  append(out, "%s %.6f\n", name, double(ns) * 1e-9);
}

}  // namespace

void Metrics::count_request(std::string_view route, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{std::string(route), status}];
}

void Metrics::count_queue_full() {
  std::lock_guard<std::mutex> lock(mu_);
  ++queue_full_;
}

void Metrics::observe_job(const JobOutcome& o) {
  std::lock_guard<std::mutex> lock(mu_);
  ++jobs_by_end_[size_t(o.end)];
  prompt_tokens_ += uint64_t(o.prompt_tokens);
  cached_tokens_ += uint64_t(o.cached_tokens);
  if (o.end != JobEnd::kFailed) ++resumes_by_source_[size_t(o.cache.source)];
  completion_tokens_ += uint64_t(o.completion_tokens);
  cache_begin_ns_ += o.cache_begin_ns;
  cache_anchor_ns_ += o.cache_anchor_ns;
  cache_end_ns_ += o.cache_end_ns;
  if (o.prefill_ns > 0) {
    prefill_tokens_ += uint64_t(o.reread_tokens);
    prefill_ns_ += o.prefill_ns;
    last_prefill_tps_ = double(o.reread_tokens) / (double(o.prefill_ns) * 1e-9);
  }
  // The first token comes from the prefill's logits; every later one costs a decode step.
  const int64_t steps = o.completion_tokens > 1 ? o.completion_tokens - 1 : 0;
  if (o.decode_ns > 0 && steps > 0) {
    decode_steps_ += uint64_t(steps);
    decode_ns_ += o.decode_ns;
    last_decode_tps_ = double(steps) / (double(o.decode_ns) * 1e-9);
  }
  drafts_.blocks += uint64_t(o.verify_blocks);
  drafts_.drafted_tokens += uint64_t(o.drafted_tokens);
  drafts_.accepted_tokens += uint64_t(o.accepted_tokens);
  drafts_.store_blocks += uint64_t(o.store_blocks);
  drafts_.store_drafted_tokens += uint64_t(o.store_drafted_tokens);
  drafts_.store_accepted_tokens += uint64_t(o.store_accepted_tokens);
  if (o.first_token_ns > 0) {
    const double s = double(o.first_token_ns) * 1e-9;
    for (size_t i = 0; i < kTtftBuckets.size(); ++i) {
      if (s <= kTtftBuckets[i]) ++ttft_buckets_[i];
    }
    ++ttft_count_;
    ttft_sum_s_ += s;
  }
}

DraftCounts Metrics::drafts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return drafts_;
}

std::string Metrics::render(const QueueGauges& queue) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  render_requests(&out);
  render_tokens(&out);
  render_drafts(&out);
  render_times(&out);
  render_queue(queue, &out);
  return out;
}

// What was asked and how it ended: HTTP routes, 429s, generations, where prompts resumed.
void Metrics::render_requests(std::string* out) const {
  header(out, "anchorage_requests_total", "counter",
         "HTTP requests answered, by route and status.");
  for (const auto& [key, n] : requests_) {
    append(out, "anchorage_requests_total{route=\"%s\",status=\"%d\"} %llu\n", key.first.c_str(),
           key.second, (unsigned long long)n);
  }
  counter(out, "anchorage_queue_full_total", "Requests refused with 429: queue full.", queue_full_);
  header(out, "anchorage_generations_total", "counter", "Generations ended, by how they ended.");
  for (size_t i = 0; i < jobs_by_end_.size(); ++i) {
    append(out, "anchorage_generations_total{end=\"%s\"} %llu\n", job_end_name(JobEnd(i)),
           (unsigned long long)jobs_by_end_[i]);
  }
  header(out, "anchorage_cache_resumes_total", "counter",
         "Requests by where their prompt resumed (cold: no cache).");
  for (cache::ResumeSource source : cache::kAllResumeSources) {
    const std::string_view name = cache::name(source);
    append(out, "anchorage_cache_resumes_total{source=\"%.*s\"} %llu\n", int(name.size()),
           name.data(), (unsigned long long)resumes_by_source_[size_t(source)]);
  }
}

void Metrics::render_tokens(std::string* out) const {
  counter(out, "anchorage_prompt_tokens_total", "Prompt tokens of every request.", prompt_tokens_);
  counter(out, "anchorage_cached_tokens_total", "Prompt tokens served by a cache.", cached_tokens_);
  counter(out, "anchorage_completion_tokens_total", "Tokens generated.", completion_tokens_);
  counter(out, "anchorage_prefill_tokens_total", "Prompt tokens read by a prefill.",
          prefill_tokens_);
  counter(out, "anchorage_decode_steps_total", "Decode steps (tokens after the first).",
          decode_steps_);
}

// Drafts by where they came from: the request's own context or the suffix store.
void Metrics::render_drafts(std::string* out) const {
  const struct {
    const char* name;
    const char* help;
    uint64_t all;
    uint64_t store;
  } drafts[] = {
      {"anchorage_draft_blocks_total", "Verify blocks, by where their drafts came from.",
       drafts_.blocks, drafts_.store_blocks},
      {"anchorage_draft_tokens_total", "Drafted tokens, by where they came from.",
       drafts_.drafted_tokens, drafts_.store_drafted_tokens},
      {"anchorage_draft_accepted_tokens_total",
       "Drafted tokens the generation chose, by where they came from.", drafts_.accepted_tokens,
       drafts_.store_accepted_tokens},
  };
  for (const auto& d : drafts) {
    header(out, d.name, "counter", d.help);
    append(out, "%s{source=\"context\"} %llu\n", d.name, (unsigned long long)(d.all - d.store));
    append(out, "%s{source=\"suffix_store\"} %llu\n", d.name, (unsigned long long)d.store);
  }
}

// Where the time went: prefill, decode, the caches' phases, and time to first token.
void Metrics::render_times(std::string* out) const {
  seconds(out, "anchorage_prefill_seconds_total", "Time spent in prefills.", prefill_ns_);
  seconds(out, "anchorage_decode_seconds_total", "Time spent in decode loops.", decode_ns_);
  header(out, "anchorage_cache_seconds_total", "counter",
         "Caches' time on the request path: begin (restore), anchor (in prefill), end.");
  append(out, "anchorage_cache_seconds_total{phase=\"begin\"} %.6f\n",
         double(cache_begin_ns_) * 1e-9);
  append(out, "anchorage_cache_seconds_total{phase=\"anchor\"} %.6f\n",
         double(cache_anchor_ns_) * 1e-9);
  append(out, "anchorage_cache_seconds_total{phase=\"end\"} %.6f\n", double(cache_end_ns_) * 1e-9);
  header(out, "anchorage_prefill_tokens_per_second", "gauge", "Prefill rate of the last request.");
  append(out, "anchorage_prefill_tokens_per_second %.3f\n", last_prefill_tps_);
  header(out, "anchorage_decode_tokens_per_second", "gauge", "Decode rate of the last request.");
  append(out, "anchorage_decode_tokens_per_second %.3f\n", last_decode_tps_);
  header(out, "anchorage_time_to_first_token_seconds", "histogram",
         "From submission to the first sampled token (queue wait and prefill included).");
  for (size_t i = 0; i < kTtftBuckets.size(); ++i) {
    append(out, "anchorage_time_to_first_token_seconds_bucket{le=\"%g\"} %llu\n", kTtftBuckets[i],
           (unsigned long long)ttft_buckets_[i]);
  }
  append(out, "anchorage_time_to_first_token_seconds_bucket{le=\"+Inf\"} %llu\n",
         (unsigned long long)ttft_count_);
  append(out, "anchorage_time_to_first_token_seconds_sum %.6f\n", ttft_sum_s_);
  append(out, "anchorage_time_to_first_token_seconds_count %llu\n",
         (unsigned long long)ttft_count_);
}

void Metrics::render_queue(const QueueGauges& queue, std::string* out) const {
  header(out, "anchorage_queue_depth", "gauge", "Requests waiting for the engine.");
  append(out, "anchorage_queue_depth %zu\n", queue.depth);
  header(out, "anchorage_queue_capacity", "gauge", "Requests that may wait before a 429.");
  append(out, "anchorage_queue_capacity %zu\n", queue.capacity);
  header(out, "anchorage_engine_busy", "gauge", "1 while a request runs on the engine.");
  append(out, "anchorage_engine_busy %d\n", queue.running ? 1 : 0);
  header(out, "anchorage_ignored_errors_total", "counter",
         "Failed steps the server went on without (a cache put or restore; logged).");
  append(out, "anchorage_ignored_errors_total %lld\n", (long long)core::ignored_status_count());
}

}  // namespace anchorage::server

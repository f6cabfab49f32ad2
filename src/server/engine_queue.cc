#include "server/engine_queue.h"

#include <algorithm>
#include <cstdio>
#include <span>

#include "cache/suffix_store.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "server/engine_caches.h"
#include "server/metrics.h"
#include "server/request_journal.h"
#include "server/token_sink.h"

namespace anchorage::server {

// Prefills of at least this many tokens log a line per chunk (docs/http-api.md "Logs").
constexpr int64_t kLongPrefillTokens = 8192;

EngineQueue::EngineQueue(engine::Engine& engine, size_t capacity, Metrics* metrics,
                         EngineCaches* caches)
    : engine_(engine), capacity_(capacity), metrics_(metrics), caches_(caches) {
  ANCHORAGE_CHECK(capacity >= 1);  // else an idle engine would refuse every job
  thread_ = std::thread([this] { loop(); });
}

EngineQueue::~EngineQueue() {
  close();
  join();
}

core::Result<std::shared_ptr<TokenStream>> EngineQueue::submit(GenerationJob job) {
  auto stream = std::make_shared<TokenStream>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return core::Status::cancelled("the server is shutting down");
    if (waiting_.size() >= capacity_) return core::Status::resource_exhausted("queue full");
    waiting_.push_back(Item{std::move(job), stream, {}, {}});
  }
  cv_.notify_all();
  return stream;
}

void EngineQueue::cut_running() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_stream_) running_stream_->cut();
}

void EngineQueue::close() {
  std::deque<Item> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    dropped.swap(waiting_);
  }
  cv_.notify_all();
  for (Item& item : dropped) {
    JobOutcome out;
    out.end = JobEnd::kCancelled;
    out.status = core::Status::cancelled("the server is shutting down");
    out.prompt_tokens = int64_t(item.job.prompt.size());
    item.stream->finish(std::move(out));
  }
}

void EngineQueue::join() {
  if (thread_.joinable()) thread_.join();
}

size_t EngineQueue::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size();
}

bool EngineQueue::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

bool EngineQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

core::Status EngineQueue::run_when_idle(const std::function<void()>& task, int wait_ms,
                                        bool refuse_if_waiting) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_) return core::Status::cancelled("the server is shutting down");
    if (refuse_if_waiting && !waiting_.empty())
      return core::Status::unavailable("a request is waiting for the engine");
    ++tasks_waiting_;  // stops a summary being written ahead
    const bool idle = cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] {
      return closed_ || (!running_ && !task_active_ && !preparing_ &&
                         (!refuse_if_waiting || waiting_.empty()));
    });
    --tasks_waiting_;
    if (closed_) return core::Status::cancelled("the server is shutting down");
    if (!idle) return core::Status::unavailable("the engine is busy");
    task_active_ = true;
  }
  task();
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_active_ = false;
  }
  cv_.notify_all();
  return core::Status::ok();
}

void EngineQueue::test_hold(bool hold) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = hold;
  }
  cv_.notify_all();
}

void EngineQueue::test_on_summary_step(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  summary_step_hook_ = std::move(hook);
}

void EngineQueue::loop() noexcept {
  while (true) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return closed_ || (!held_ && !task_active_ && !waiting_.empty()); };
      if (caches_ != nullptr && caches_->options().prepare.enabled && ahead_armed_) {
        // Idle this long: the summary of the conversation in place is written ahead.
        const auto idle = std::chrono::duration<double>(caches_->options().prepare.idle_s);
        if (!cv_.wait_for(lock, idle, ready)) {
          if (!held_ && !task_active_ && tasks_waiting_ == 0) prepare_ahead(lock);
          continue;
        }
      } else {
        cv_.wait(lock, ready);
      }
      if (waiting_.empty()) return;  // closed (close() emptied the queue)
      if (held_ || task_active_) continue;
      item = std::move(waiting_.front());
      waiting_.pop_front();
      running_ = true;
      running_stream_ = item.stream;
    }
    item.stream->start();
    JobOutcome out = run(item);
    if (metrics_ != nullptr) metrics_->observe_job(out);
    log_outcome(item.job, out);
    // The caches' work after an answer (an echo anchor) runs when no other request waits.
    // Asked before the answer goes out: the client's own next request cannot be waiting
    // yet, and when it comes it waits for that work, which saves it the same re-read.
    bool idle = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle = waiting_.empty();
    }
    item.stream->finish(std::move(out));
    // After the answer: the store only queues the new part (its own thread writes and indexes).
    if (suffix_ != nullptr && !item.read_tokens.empty())
      suffix_->add_request(item.read_tokens, item.written_tokens);
    // Still as the running job, so an idle task cannot interleave.
    if (idle && caches_ != nullptr) {
      caches_->after_answer();
      caches_->stock_spares([this] { return work_waits(); });
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
      running_stream_.reset();
      ahead_armed_ = true;  // the conversation in place may want its summary now
    }
    cv_.notify_all();
  }
}

bool EngineQueue::work_waits() const {
  std::lock_guard<std::mutex> g(mu_);
  return closed_ || !waiting_.empty() || tasks_waiting_ > 0;
}

// Runs the caches' idle step with the lock released; a job that arrives, a task that waits for
// the engine, or the shutdown stops it (the caches look between prefill calls and tokens).
void EngineQueue::prepare_ahead(std::unique_lock<std::mutex>& lock) {
  preparing_ = true;
  const std::function<void()> step_hook = summary_step_hook_;
  lock.unlock();
  if (caches_->summary_wanted()) {
    caches_->prepare_summary([this, &step_hook] {
      if (step_hook) step_hook();
      return work_waits();
    });
  }
  // Written (or not wanted): nothing to do until a job changes the conversation in place.
  // Stopped: the next idle period tries again.
  const bool again = caches_->summary_wanted();
  lock.lock();
  ahead_armed_ = again;
  preparing_ = false;
  cv_.notify_all();
}

JobOutcome EngineQueue::run(Item& item) {
  const GenerationJob& job = item.job;
  JobOutcome out;
  out.prompt_tokens = int64_t(job.prompt.size());
  out.queue_ns = core::now_ns() - job.submitted_ns;
  if (item.stream->cancelled()) {  // the client left while the job waited
    out.end = JobEnd::kCancelled;
    return out;
  }
  const int64_t begin_t0 = core::now_ns();
  auto start = start_job(job);
  out.cache_begin_ns = core::now_ns() - begin_t0;
  if (!start) {
    out.end = JobEnd::kFailed;
    out.status = start.error();
    return out;
  }
  out.prompt_tokens = start->split.usage_prompt_tokens();
  out.cached_tokens = start->split.cached;
  out.reread_tokens = start->split.reread;
  out.cache = start->split;
  if (start->response) return replay_response(item, *start->response, out);

  const bool keep_response =
      caches_ != nullptr && !job.response_key.empty() && caches_->options().response_cache;
  TokenSink sink(job, *item.stream, engine_, keep_response);
  auto result = generate(job, *start, sink, *item.stream, &out);
  out.first_token_ns = sink.first_token_ns();
  if (!result) {
    if (caches_ != nullptr) caches_->abandon();
    out.end = JobEnd::kFailed;
    out.status = result.error();
    return out;
  }
  note_generation(job, *result, sink, &out);
  if (suffix_ != nullptr) {
    item.read_tokens = start->served.tokens;
    item.written_tokens = result->tokens;
  }
  if (caches_ != nullptr) {
    const int64_t end_t0 = core::now_ns();
    caches_->end(job, *start, *result, sink.hidden_sampled(), start->split.reread);
    if (keep_response && out.end != JobEnd::kCancelled && sink.hidden_sampled().empty())
      caches_->put_response(job, *start, {sink.take_kept(), job_end_name(out.end)});
    out.cache_end_ns = core::now_ns() - end_t0;
  }
  if (journal_ != nullptr) journal_->record(job, result->tokens, out);
  return out;
}

// What the generation did, into the outcome: tokens, times, how it ended, the drafts.
void EngineQueue::note_generation(const GenerationJob& job, const engine::GenerationResult& result,
                                  const TokenSink& sink, JobOutcome* out) {
  out->hidden_tokens = job.constraint ? job.constraint->hidden_count() : 0;
  out->completion_tokens = int64_t(result.tokens.size()) - out->hidden_tokens;
  out->prefill_ns = result.prefill_ns;
  out->decode_ns = result.decode_ns;
  out->end = job_end(result.finish, sink.stopped_by_string());
  out->verify_blocks = result.verify_blocks;
  out->drafted_tokens = result.drafted_tokens;
  out->accepted_tokens = result.accepted_tokens;
}

// Where the prompt resumes (docs/cache.md): the caches' pick, or a cold start without them.
core::Result<CacheStart> EngineQueue::start_job(const GenerationJob& job) {
  if (caches_ != nullptr) return caches_->begin(job);
  CacheStart start;
  start.served = ServedPrompt::client(job.prompt);
  start.split.prompt_tokens = int64_t(job.prompt.size());
  start.split.reread = start.split.prompt_tokens;
  start.split.client_tokens = start.split.prompt_tokens;
  engine_.reset();
  return start;
}

core::Result<engine::GenerationResult> EngineQueue::generate(const GenerationJob& job,
                                                             const CacheStart& start,
                                                             TokenSink& sink, TokenStream& stream,
                                                             JobOutcome* out) {
  engine::GenerationOptions opts;
  opts.max_tokens = job.max_tokens;
  opts.stop_ids = job.stop_ids;
  opts.sampling = job.sampling;
  if (caches_ != nullptr) {
    opts.prefill = caches_->prefill_hooks(start);
    // The caches' share of the prefill's time, for the request's timings.
    opts.prefill.on_anchor = [anchor_ns = &out->cache_anchor_ns,
                              hook = std::move(opts.prefill.on_anchor)](int64_t position,
                                                                        bool is_end) {
      const int64_t t0 = core::now_ns();
      hook(position, is_end);
      *anchor_ns += core::now_ns() - t0;
    };
  }
  // A long prefill is minutes of silence otherwise: a log line per chunk, and the client's
  // progress events when it asked for them.
  const int64_t cached = start.resume_at();
  const int64_t total = int64_t(start.served.tokens.size());
  const int64_t t0 = core::now_ns();
  if (job.return_progress || total - cached >= kLongPrefillTokens) {
    // A hook the caches may set runs first.
    opts.prefill.on_progress = [&job, &stream, cached, total, t0,
                                before = std::move(opts.prefill.on_progress)](int64_t done,
                                                                              int64_t all) {
      if (before) before(done, all);
      PromptProgress p{total, cached, cached + done, (core::now_ns() - t0) / 1000000};
      if (total - cached >= kLongPrefillTokens) {
        ANCHORAGE_LOG_INFO("request %016llx: prefill %lld of %lld tokens (%lld cached), %.1f s",
                           (unsigned long long)job.request_id, (long long)p.processed,
                           (long long)total, (long long)cached, double(p.time_ms) / 1000.0);
      }
      if (job.return_progress) {
        TokenEvent event;
        event.progress = p;
        stream.push(std::move(event));
      }
    };
  }
  if (job.constraint) {
    opts.allowed_next = [&job](std::span<const int32_t> sampled) {
      return job.constraint->allowed_next(sampled);
    };
  }
  opts.on_token = [&sink](int32_t token) { return sink(token); };
  const std::span<const int32_t> prompt(start.served.tokens);
  const size_t cached_tokens = size_t(start.resume_at());
  std::optional<engine::LookupDrafter> drafter;
  if (draft_) {
    drafter.emplace(*draft_, suffix_);
    opts.drafter = &*drafter;
    opts.draft_max = draft_->draft_max;
    opts.draft_context = prompt.first(cached_tokens);
  }
  auto result = engine::generate(engine_, prompt.subspan(cached_tokens), opts);
  if (drafter) {
    const engine::FallbackDraftStats& f = drafter->fallback_stats();
    out->store_blocks = f.blocks;
    out->store_drafted_tokens = f.drafted_tokens;
    out->store_accepted_tokens = f.accepted_tokens;
  }
  return result;
}

JobEnd EngineQueue::job_end(engine::FinishReason finish, bool stopped_by_string) {
  switch (finish) {
    case engine::FinishReason::kMaxTokens:
    case engine::FinishReason::kCapacity:
      return JobEnd::kLength;
    case engine::FinishReason::kStopToken:
      return JobEnd::kStopToken;
    case engine::FinishReason::kStopped:
      return stopped_by_string ? JobEnd::kStopString : JobEnd::kCancelled;
  }
  return JobEnd::kLength;
}

// One line a request: counts, the cache split and times, never text (docs/http-api.md "Logs").
void EngineQueue::log_outcome(const GenerationJob& job, const JobOutcome& out) {
  char session[24] = "no session";
  if (!job.session.empty())
    std::snprintf(session, sizeof(session), "%016llx", (unsigned long long)job.session.hash());
  const CacheSplit& c = out.cache;
  const std::string_view tier = c.tier();
  const std::string_view source = cache::name(c.source);
  const std::string_view served = c.differing > 0 ? c.served_name() : std::string_view();
  ANCHORAGE_LOG_INFO(
      "request %016llx: session %s, prompt %lld (cached %lld, reread %lld, %.*s/%.*s, %s%s%.*s), "
      "%lld generated, end %s, ttft %.3f s, prefill %.3f s, decode %.3f s, caches %.3f s before, "
      "%.3f s at lines, %.3f s after",
      (unsigned long long)job.request_id, session, (long long)out.prompt_tokens,
      (long long)out.cached_tokens, (long long)out.reread_tokens, int(tier.size()), tier.data(),
      int(source.size()), source.data(), c.exact ? "exact" : "not exact",
      served.empty() ? "" : ", served ", int(served.size()), served.data(),
      (long long)out.completion_tokens, job_end_name(out.end), double(out.first_token_ns) * 1e-9,
      double(out.prefill_ns) * 1e-9, double(out.decode_ns) * 1e-9,
      double(out.cache_begin_ns) * 1e-9, double(out.cache_anchor_ns) * 1e-9,
      double(out.cache_end_ns) * 1e-9);
}

// A response-cache hit: the stored tokens go out as if generated, the engine untouched.
JobOutcome EngineQueue::replay_response(Item& item, const cache::CachedResponse& response,
                                        JobOutcome out) {
  for (const cache::CachedToken& t : response.tokens) {
    if (out.first_token_ns == 0) out.first_token_ns = core::now_ns() - item.job.submitted_ns;
    TokenEvent event;
    event.token = t.token;
    event.logprob = t.logprob;
    event.top = t.top;
    item.stream->push(std::move(event));
  }
  out.completion_tokens = int64_t(response.tokens.size());
  out.end = job_end_from_name(response.finish_reason);
  if (journal_ != nullptr) {
    std::vector<int32_t> sampled;
    for (const cache::CachedToken& t : response.tokens) sampled.push_back(t.token);
    journal_->record(item.job, sampled, out);
  }
  return out;
}

}  // namespace anchorage::server

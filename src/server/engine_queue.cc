#include "server/engine_queue.h"

#include <algorithm>
#include <span>

#include "core/check.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "server/engine_caches.h"
#include "server/metrics.h"
#include "server/token_logprobs.h"

namespace anchorage::server {

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
    waiting_.push_back(Item{std::move(job), stream});
  }
  cv_.notify_all();
  return stream;
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
    const bool idle = cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] {
      return closed_ || (!running_ && !task_active_ && (!refuse_if_waiting || waiting_.empty()));
    });
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

void EngineQueue::loop() noexcept {
  while (true) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closed_ || (!held_ && !task_active_ && !waiting_.empty()); });
      if (waiting_.empty()) return;  // closed (close() emptied the queue)
      if (held_ || task_active_) continue;
      item = std::move(waiting_.front());
      waiting_.pop_front();
      running_ = true;
    }
    JobOutcome out = run(item);
    if (metrics_ != nullptr) metrics_->observe_job(out);
    ANCHORAGE_LOG_INFO(
        "request %016llx: session %016llx, prompt %lld (cached %lld), %lld generated, "
        "end %s, prefill %.3f s, decode %.3f s",
        (unsigned long long)item.job.request_id, (unsigned long long)item.job.session.hash(),
        (long long)out.prompt_tokens, (long long)out.cached_tokens,
        (long long)out.completion_tokens, job_end_name(out.end), double(out.prefill_ns) * 1e-9,
        double(out.decode_ns) * 1e-9);
    item.stream->finish(std::move(out));
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
    }
    cv_.notify_all();
  }
}

JobOutcome EngineQueue::run(Item& item) {
  const GenerationJob& job = item.job;
  TokenStream& stream = *item.stream;
  JobOutcome out;
  out.prompt_tokens = int64_t(job.prompt.size());
  out.queue_ns = core::now_ns() - job.submitted_ns;
  if (stream.cancelled()) {  // the client left while the job waited
    out.end = JobEnd::kCancelled;
    return out;
  }

  // Where the prompt resumes (docs/cache.md): the caches' pick, or a cold start without them.
  CacheStart start;
  if (caches_ != nullptr) {
    auto begun = caches_->begin(job);
    if (!begun) {
      out.end = JobEnd::kFailed;
      out.status = begun.error();
      return out;
    }
    start = std::move(begun.value());
  } else {
    start.served = job.prompt;
    engine_.reset();
  }
  out.cached_tokens = std::min(start.resume_at, out.prompt_tokens);
  out.reread_tokens = int64_t(start.served.size()) - start.resume_at;
  out.cache_tier = start.tier;
  out.cache_source = start.source;
  out.cache_aligned = start.aligned;
  out.cache_exact = start.exact;
  if (start.response) return replay_response(item, *start.response, out);

  bool stopped_by_string = false;
  engine::GenerationOptions opts;
  opts.max_tokens = job.max_tokens;
  opts.stop_ids = job.stop_ids;
  opts.sampling = job.sampling;
  if (caches_ != nullptr) opts.prefill = caches_->prefill_hooks(start);
  size_t n_sampled = 0;
  std::vector<size_t> hidden_sampled;
  std::vector<cache::CachedToken> kept;  // for the response cache
  const bool keep_response =
      caches_ != nullptr && !job.response_key.empty() && caches_->options().response_cache;
  if (job.constraint) {
    opts.allowed_next = [&](std::span<const int32_t> sampled) {
      return job.constraint->allowed_next(sampled);
    };
  }
  opts.on_token = [&](int32_t token) {
    if (out.first_token_ns == 0) out.first_token_ns = core::now_ns() - job.submitted_ns;
    TokenEvent event;
    event.token = token;
    event.hidden = job.constraint && job.constraint->hidden(n_sampled);
    if (event.hidden) hidden_sampled.push_back(n_sampled);
    ++n_sampled;
    if (event.hidden) {  // forced and hidden: nothing for the client, no stop-string check
      stream.push(std::move(event));
      return !stream.cancelled();
    }
    const bool is_stop_id =
        std::find(job.stop_ids.begin(), job.stop_ids.end(), token) != job.stop_ids.end();
    // A stop id is counted but never rendered, so its logprobs are not reported either.
    if (job.top_logprobs >= 0 && !is_stop_id) {
      fill_token_logprobs(engine_.logits(), job.top_logprobs, &event);
    }
    if (keep_response) kept.push_back({event.token, event.logprob, event.top});
    stream.push(std::move(event));
    if (stream.cancelled()) return false;
    if (!is_stop_id && job.stop_after && job.stop_after(token)) {
      stopped_by_string = true;
      return false;
    }
    return true;
  };
  const std::span<const int32_t> prompt(start.served);
  auto result = engine::generate(engine_, prompt.subspan(size_t(start.resume_at)), opts);
  if (!result) {
    if (caches_ != nullptr) caches_->abandon();
    out.end = JobEnd::kFailed;
    out.status = result.error();
    return out;
  }
  out.hidden_tokens = job.constraint ? job.constraint->hidden_count() : 0;
  out.completion_tokens = int64_t(result->tokens.size()) - out.hidden_tokens;
  out.prefill_ns = result->prefill_ns;
  out.decode_ns = result->decode_ns;
  switch (result->finish) {
    case engine::FinishReason::kMaxTokens:
    case engine::FinishReason::kCapacity:
      out.end = JobEnd::kLength;
      break;
    case engine::FinishReason::kStopToken:
      out.end = JobEnd::kStopToken;
      break;
    case engine::FinishReason::kStopped:
      out.end = stopped_by_string ? JobEnd::kStopString : JobEnd::kCancelled;
      break;
  }
  if (caches_ != nullptr) {
    caches_->end(job, start, *result, hidden_sampled,
                 int64_t(start.served.size()) - start.resume_at);
    if (keep_response && out.end != JobEnd::kCancelled && hidden_sampled.empty()) {
      caches_->put_response(job, start, {std::move(kept), job_end_name(out.end)});
    }
  }
  return out;
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
  return out;
}

}  // namespace anchorage::server

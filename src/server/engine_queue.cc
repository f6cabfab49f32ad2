#include "server/engine_queue.h"

#include <algorithm>
#include <span>

#include "core/check.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "server/metrics.h"
#include "server/resume_plan.h"
#include "server/token_logprobs.h"

namespace anchorage::server {

EngineQueue::EngineQueue(engine::Engine& engine, size_t capacity, Metrics* metrics)
    : engine_(engine), capacity_(capacity), metrics_(metrics) {
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
      cv_.wait(lock, [&] { return closed_ || (!held_ && !waiting_.empty()); });
      if (waiting_.empty()) return;  // closed (close() emptied the queue)
      if (held_) continue;
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

  // The Planner seam (resume_plan.h): today a cold start on a reset engine.
  const ResumePlan plan = plan_cold_start();
  engine_.reset();
  out.cached_tokens = plan.resume_at;
  out.reread_tokens = out.prompt_tokens - plan.resume_at;
  out.cache_tier = plan.tier;
  out.cache_source = plan.source;

  bool stopped_by_string = false;
  engine::GenerationOptions opts;
  opts.max_tokens = job.max_tokens;
  opts.stop_ids = job.stop_ids;
  opts.sampling = job.sampling;
  opts.on_token = [&](int32_t token) {
    if (out.first_token_ns == 0) out.first_token_ns = core::now_ns() - job.submitted_ns;
    TokenEvent event;
    event.token = token;
    const bool is_stop_id =
        std::find(job.stop_ids.begin(), job.stop_ids.end(), token) != job.stop_ids.end();
    // A stop id is counted but never rendered, so its logprobs are not reported either.
    if (job.top_logprobs >= 0 && !is_stop_id) {
      fill_token_logprobs(engine_.logits(), job.top_logprobs, &event);
    }
    stream.push(std::move(event));
    if (stream.cancelled()) return false;
    if (!is_stop_id && job.stop_after && job.stop_after(token)) {
      stopped_by_string = true;
      return false;
    }
    return true;
  };
  const std::span<const int32_t> prompt(job.prompt);
  auto result = engine::generate(engine_, prompt.subspan(size_t(plan.resume_at)), opts);
  if (!result) {
    out.end = JobEnd::kFailed;
    out.status = result.error();
    return out;
  }
  out.completion_tokens = int64_t(result->tokens.size());
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
  return out;
}

}  // namespace anchorage::server

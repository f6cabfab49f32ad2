// EngineQueue: the one engine and the one thread that runs it (docs/architecture.md §7). HTTP
// threads submit GenerationJobs; the engine thread runs them one at a time, in order, and
// streams each job's tokens back through its TokenStream. The queue is bounded: a job that
// finds it full is refused (the caller answers 429). The server sees only this class: no
// engine internals (docs/style.md §9).
//
// Shutdown (SIGTERM): close() refuses new jobs, ends every waiting job with a "shutting down"
// outcome, and lets the running one finish; join() waits for the engine thread.
//
// Thread safety: submit, close, depth, running and the test_ hooks from any thread; the
// engine is touched only by the engine thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/status.h"
#include "engine/generation.h"
#include "engine/lookup_drafter.h"
#include "server/generation_job.h"
#include "server/token_stream.h"

namespace anchorage::engine {
class Engine;
}
namespace anchorage::cache {
struct CachedResponse;
class SuffixStore;
}  // namespace anchorage::cache

namespace anchorage::server {

class EngineCaches;
class Metrics;
class RequestJournal;
class TokenSink;
struct CacheStart;

class EngineQueue {
 public:
  // engine must outlive the queue; metrics (may be null) is told about every job that ends;
  // caches (may be null: --no-cache, every request cold) decide where each job resumes.
  EngineQueue(engine::Engine& engine, size_t capacity, Metrics* metrics,
              EngineCaches* caches = nullptr);
  ~EngineQueue();  // close() + join()
  EngineQueue(const EngineQueue&) = delete;
  EngineQueue& operator=(const EngineQueue&) = delete;

  // ResourceExhausted when `capacity` jobs already wait; Cancelled after close().
  core::Result<std::shared_ptr<TokenStream>> submit(GenerationJob job);

  void close();
  void join();

  size_t capacity() const { return capacity_; }
  size_t depth() const;  // jobs waiting, the running one not counted
  bool running() const;  // a job is on the engine now
  bool closed() const;

  // Runs `task` on the calling thread with the engine to itself: waits up to wait_ms for the
  // running job to end, then keeps the engine thread from starting another until the task
  // returns. Unavailable when the engine stayed busy, or at once when refuse_if_waiting and a
  // job waits (the peek route answers 409 then); Cancelled after close().
  // Cuts the running job, if any (the shutdown's drain deadline passed).
  void cut_running();
  core::Status run_when_idle(const std::function<void()>& task, int wait_ms,
                             bool refuse_if_waiting);

  // Tests: while held, the engine thread starts no new job (the queue fills up on demand).
  void test_hold(bool hold);
  // Tests: called on the engine thread each time a summary being written ahead looks for a
  // waiting job (before each prefill call, after each sampled token), just before it looks. A
  // test submits its request there to stop the run at a known step, without a timing race.
  void test_on_summary_step(std::function<void()> hook);
  // The request journal (may be null: none). Set before the first submit; it must outlive
  // the queue.
  void set_journal(RequestJournal* journal) { journal_ = journal; }
  // Speculative decoding with the lookup drafter for every later job (docs/speculation.md).
  // Set before the first submit.
  void set_drafting(const engine::LookupDrafterOptions& draft) { draft_ = draft; }
  // The persistent suffix store (may be null): the drafter's fallback, and every answered
  // request is added to it after its answer went out (docs/suffix-store.md). Set before the
  // first submit; it must outlive the queue.
  void set_suffix_store(cache::SuffixStore* store) { suffix_ = store; }

 private:
  struct Item {
    GenerationJob job;
    std::shared_ptr<TokenStream> stream;
    // What the engine read and wrote, for the suffix store (filled when there is one).
    std::vector<int32_t> read_tokens;
    std::vector<int32_t> written_tokens;
  };
  void loop() noexcept;
  void prepare_ahead(std::unique_lock<std::mutex>& lock);
  // Whether idle work should stop: a job or a task waits for the engine, or the queue closed.
  bool work_waits() const;
  JobOutcome run(Item& item);
  core::Result<CacheStart> start_job(const GenerationJob& job);
  core::Result<engine::GenerationResult> generate(const GenerationJob& job, const CacheStart& start,
                                                  TokenSink& sink, TokenStream& stream,
                                                  JobOutcome* out);
  static JobEnd job_end(engine::FinishReason finish, bool stopped_by_string);
  static void note_generation(const GenerationJob& job, const engine::GenerationResult& result,
                              const TokenSink& sink, JobOutcome* out);
  static void log_outcome(const GenerationJob& job, const JobOutcome& out);
  JobOutcome replay_response(Item& item, const cache::CachedResponse& response, JobOutcome out);

  engine::Engine& engine_;
  const size_t capacity_;
  Metrics* metrics_;
  EngineCaches* caches_;
  RequestJournal* journal_ = nullptr;
  std::optional<engine::LookupDrafterOptions> draft_;  // none: plain decode
  cache::SuffixStore* suffix_ = nullptr;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> waiting_;
  bool closed_ = false;
  bool running_ = false;
  std::shared_ptr<TokenStream> running_stream_;  // the running job's, for cut_running()
  bool held_ = false;
  bool task_active_ = false;  // run_when_idle's task has the engine
  int tasks_waiting_ = 0;     // run_when_idle calls waiting for the engine
  bool preparing_ = false;    // the caches write a summary ahead (--compaction-prepare)
  bool ahead_armed_ = true;   // the idle step may have work (false: wait for a job)
  std::function<void()> summary_step_hook_;  // test_on_summary_step
  std::thread thread_;
};

}  // namespace anchorage::server

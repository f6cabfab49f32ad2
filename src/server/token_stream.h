// TokenStream: the channel between the engine thread (producer) and the HTTP thread that
// answers one request (consumer): the job's TokenEvents in order, then its JobOutcome. The
// consumer may cancel at any time (client gone, stop); the engine thread reads the flag after
// every token and stops at once.
//
// Thread safety: push/finish from the engine thread, wait/cancel from the HTTP thread; all
// methods take the internal mutex. Shared by both sides through a shared_ptr.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "server/generation_job.h"

namespace anchorage::server {

class TokenStream {
 public:
  // --- engine thread ---
  // The engine took the job off the queue (before its prefill).
  void start();
  void push(TokenEvent event);
  void finish(JobOutcome outcome);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // --- HTTP thread ---
  void cancel() { cancelled_.store(true, std::memory_order_release); }
  // --- shutdown ---
  // Cancels the job because the drain deadline passed: its answer then says so.
  void cut() {
    cut_.store(true, std::memory_order_release);
    cancel();
  }
  bool was_cut() const { return cut_.load(std::memory_order_acquire); }
  // Waits up to `timeout` for events or the outcome. Moves the events that arrived into
  // *events (appending) and returns true once the outcome is in *outcome (after the last
  // event); false on a timeout or with only events.
  bool wait(std::chrono::milliseconds timeout, std::vector<TokenEvent>* events,
            JobOutcome* outcome);
  // Waits up to `timeout` for the engine to take the job (or for events or the outcome);
  // true then. A streamed answer holds its headers until then, so that a job refused while
  // queued (shutdown) is answered with a status, not 200 and an in-stream error.
  bool wait_taken(std::chrono::milliseconds timeout);
  // True, with the outcome, when the job ended without the engine ever taking it.
  bool ended_untaken(JobOutcome* outcome);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TokenEvent> events_;
  bool finished_ = false;
  bool started_ = false;
  JobOutcome outcome_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> cut_{false};
};

}  // namespace anchorage::server

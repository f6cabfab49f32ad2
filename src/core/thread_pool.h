// ThreadPool: a fixed set of worker threads that run the tasks of one parallel_for at a time.
// Kernels stay batch-invariant because a task's result never depends on which thread runs it or
// on how many threads there are (docs/architecture.md §4).
//
// Each thread owns a contiguous range of the tasks (thread i: [i n / T, (i + 1) n / T)) and runs
// it first, front to back; a thread that runs out takes what is left of the others' ranges from
// their back ends. So on a steady machine a decode step's calls, which repeat the same task
// lists token after token, give every thread the same panels and the same recurrent heads each
// time: they stay in that core's caches instead of moving between cores (on the 2-vCPU VMs we
// measure on, the move cost more than the second thread gained: docs/performance.md "Threads").
// A preempted thread's tasks are still taken by the others; and since a thief takes the last
// task of a range, the owner's walk through its range (a GEMM's weights, which the memory
// streams ahead of it) is never cut, and the thief does not take the task whose bytes the
// owner's stream has already fetched.
// parallel_for may be called from one thread at a time (the engine thread); it blocks until
// every task has run, and the calling thread runs tasks too.
//
// Waking a sleeping worker costs 10-40 us, more than a decode step's GEMM of one layer takes, so
// workers spin (with pause) for a short while after each parallel_for before they sleep, and the
// caller spins while the last tasks finish. A decode's back-to-back calls then never sleep, and
// take the mutex only when a thread does (a decode step makes ~60 calls on `small`).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace anchorage::core {

class ThreadPool {
 public:
  // n_threads counts the calling thread: 1 means no worker threads at all.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }

  // Runs fn(task) for task in [0, n_tasks), spread over the threads; returns when all ran.
  // n_tasks < 2^31.
  void parallel_for(int64_t n_tasks, const std::function<void(int64_t task)>& fn);

  // The number of hardware threads this process may use (at least 1).
  static int hardware_threads();

 private:
  void worker_loop(int self);
  void run_tasks(int self);

  // One thread's unclaimed tasks of the current parallel_for, [next, end) packed as next << 32 |
  // end in one word, so the owner (next + 1) and a thief (end - 1) claim with one
  // compare-exchange each and never the same task (one line each, so claiming does not bounce
  // the others' counters between cores).
  struct alignas(64) Range {
    std::atomic<uint64_t> span{0};
  };
  // Claims the next task of r from its front (the owner) or its back (a thief); false when r
  // is empty.
  static bool claim(Range& r, bool from_back, int64_t* task);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  // Three lines, so a call's hand-off moves each between the cores only as its protocol needs:
  // what the caller writes to start a call (the generation and the task function), what the
  // workers write as they finish (active_), and the flags that change only when a thread
  // sleeps or the pool stops.
  alignas(64) std::atomic<uint64_t> generation_{0};  // bumped to start a parallel_for
  const std::function<void(int64_t)>* fn_ = nullptr;
  alignas(64) std::atomic<int> active_{0};    // workers still inside the current parallel_for
  alignas(64) std::atomic<int> sleepers_{0};  // workers waiting on start_cv_
  std::atomic<bool> caller_waits_{false};     // the caller waits on done_cv_
  std::atomic<bool> stop_{false};
  std::unique_ptr<Range[]> ranges_;  // n_threads_ of them; the caller is thread 0
};

// Runs fn over [0, n) on pool when it is not null, else inline. A null pool is one thread.
void parallel_for(ThreadPool* pool, int64_t n_tasks, const std::function<void(int64_t)>& fn);

}  // namespace anchorage::core

#include "core/thread_pool.h"

#include <immintrin.h>
#include <sched.h>

#include "core/check.h"

namespace anchorage::core {

namespace {
// A few microseconds of pause instructions: covers the gap between two kernels of a decode step.
// Longer spins were measured to hurt badly on a loaded machine (a spinning thread takes the core
// the preempted worker needs): `anchorage run --preset small --threads 2` decoded 4.7 tok/s
// with 20,000 iterations, 39 with none and 61 with 1,000, all with a build running beside it.
constexpr int kSpinIterations = 1000;
}  // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads < 1 ? 1 : n_threads), ranges_(new Range[size_t(n_threads_)]) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::hardware_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : int(n);
}

bool ThreadPool::claim(Range& r, bool from_back, int64_t* task) {
  uint64_t s = r.span.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t next = s >> 32, end = s & 0xffffffffu;
    if (next >= end) return false;
    // The owner moves next up, a thief moves end down: each word names one claimant per task.
    const uint64_t want = from_back ? s - 1 : s + (uint64_t(1) << 32);
    if (r.span.compare_exchange_weak(s, want, std::memory_order_relaxed)) {
      *task = int64_t(from_back ? end - 1 : next);
      return true;
    }
  }
}

void ThreadPool::run_tasks(int self) {
  // Its own range front to back, then the others' leftovers from their backs.
  int64_t t = 0;
  for (int k = 0; k < n_threads_; ++k) {
    Range& r = ranges_[size_t((self + k) % n_threads_)];
    while (claim(r, k > 0, &t)) (*fn_)(t);
  }
}

void ThreadPool::worker_loop(int self) {
  uint64_t seen = 0;
  for (;;) {
    // Spin first: the next parallel_for usually comes within microseconds.
    bool started = false;
    for (int i = 0; i < kSpinIterations; ++i) {
      if (generation_.load(std::memory_order_acquire) != seen ||
          stop_.load(std::memory_order_relaxed)) {
        started = true;
        break;
      }
      _mm_pause();
    }
    if (!started) {
      std::unique_lock<std::mutex> lk(mu_);
      // Counted before the generation is read again (both seq_cst), so a parallel_for that
      // finds no sleeper has bumped the generation before this reads it: no lost wake-up.
      sleepers_.fetch_add(1);
      start_cv_.wait(lk, [&] { return stop_.load() || generation_.load() != seen; });
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    run_tasks(self);
    // The mutex only when the caller sleeps: a spinning caller sees active_ reach 0 itself.
    // Both seq_cst: a caller that starts to wait after this read sees this decrement first.
    if (active_.fetch_sub(1) == 1 && caller_waits_.load()) {
      std::lock_guard<std::mutex> lk(mu_);  // pairs with the caller's wait below
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& fn) {
  if (n_tasks <= 0) return;
  ANCHORAGE_CHECK(n_tasks < (int64_t(1) << 31));
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t);
    return;
  }
  fn_ = &fn;
  for (int i = 0; i < n_threads_; ++i) {
    const uint64_t begin = uint64_t(n_tasks * i / n_threads_);
    const uint64_t end = uint64_t(n_tasks * (i + 1) / n_threads_);
    ranges_[size_t(i)].span.store(begin << 32 | end, std::memory_order_relaxed);
  }
  active_.store(int(workers_.size()), std::memory_order_relaxed);
  // A decode's back-to-back calls find every worker spinning: no mutex, no futex. A worker
  // that went to sleep counted itself first (seq_cst, as this bump and load), so either it
  // sees the new generation before it waits or it is counted here and woken under the mutex.
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lk(mu_);
    start_cv_.notify_all();
  }
  run_tasks(0);
  for (int i = 0; i < kSpinIterations; ++i) {
    if (active_.load(std::memory_order_acquire) == 0) break;
    _mm_pause();
  }
  if (active_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lk(mu_);
    caller_waits_.store(true);
    done_cv_.wait(lk, [&] { return active_.load() == 0; });
    caller_waits_.store(false);
  }
  fn_ = nullptr;
}

void parallel_for(ThreadPool* pool, int64_t n_tasks, const std::function<void(int64_t)>& fn) {
  if (pool) {
    pool->parallel_for(n_tasks, fn);
  } else {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t);
  }
}

}  // namespace anchorage::core

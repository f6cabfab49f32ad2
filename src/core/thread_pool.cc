#include "core/thread_pool.h"

#include <sched.h>

namespace anchorage::core {

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
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

void ThreadPool::run_tasks() {
  for (;;) {
    int64_t t = next_.fetch_add(1, std::memory_order_relaxed);
    if (t >= n_tasks_) break;
    (*fn_)(t);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      start_cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_tasks();
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (--active_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& fn) {
  if (n_tasks <= 0) return;
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    n_tasks_ = n_tasks;
    next_.store(0, std::memory_order_relaxed);
    active_ = int(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  run_tasks();
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return active_ == 0; });
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

#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace anchorage::core {
namespace {

// Every task runs exactly once, back to back (workers still spinning) and after the workers
// went to sleep (the wake-up path).
TEST(ThreadPool, EveryTaskRunsOnceSpinningAndSleeping) {
  ThreadPool pool(2);
  for (int round = 0; round < 200; ++round) {
    const int64_t n = 1 + round % 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t t) { hits[size_t(t)].fetch_add(1); });
    for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[size_t(t)].load(), 1) << round;
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Three and four threads, fewer tasks than threads included (empty ranges).
TEST(ThreadPool, EveryTaskRunsOnceWithMoreThreads) {
  for (int threads : {3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n = 1; n < 40; ++n) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t t) { hits[size_t(t)].fetch_add(1); });
      for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[size_t(t)].load(), 1) << threads << " " << n;
    }
  }
}

// A thread starts with its own range: the worker's first task is one of the second half, never
// the caller's next one (with one shared counter it took task 1).
TEST(ThreadPool, AThreadRunsItsOwnRangeFirst) {
  ThreadPool pool(2);
  const auto me = std::this_thread::get_id();
  int rounds_with_worker = 0;
  for (int round = 0; round < 20; ++round) {
    std::atomic<int64_t> worker_first{-1};
    pool.parallel_for(4, [&](int64_t t) {
      if (std::this_thread::get_id() != me) {
        int64_t none = -1;
        worker_first.compare_exchange_strong(none, t);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
    const int64_t first = worker_first.load();
    if (first >= 0) {
      EXPECT_GE(first, 2) << round;
    }
    rounds_with_worker += first >= 0;
  }
  // The worker has 2 ms or more to wake each round: it must have run in some, or the check
  // above checked nothing.
  EXPECT_GT(rounds_with_worker, 0);
}

// A thread held up in a task leaves the rest of its range to the others: the caller's first task
// waits until every other task ran, which needs the worker to take the rest of the caller's range.
// (A worker that starts first may finish its range and take the caller's whole range before the
// caller runs anything; such a round shows nothing, so rounds repeat until the caller is held.)
TEST(ThreadPool, AHeldUpThreadsRangeIsTakenByTheOthers) {
  ThreadPool pool(2);
  const auto me = std::this_thread::get_id();
  const int64_t n = 20;
  bool held = false, all_ran = false;
  for (int round = 0; round < 100 && !held; ++round) {
    std::atomic<int64_t> done{0};
    pool.parallel_for(n, [&](int64_t) {
      if (std::this_thread::get_id() == me && !held) {
        held = true;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (done.load() < n - 1 && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        all_ran = done.load() == n - 1;
      }
      done.fetch_add(1);
    });
    EXPECT_EQ(done.load(), n);
  }
  ASSERT_TRUE(held);
  EXPECT_TRUE(all_ran);
}

// A thief takes a range from its back and walks it down, so the owner's walk from the front is
// never cut: while the caller is held in its first task (0), the worker runs its own range
// front to back (10 .. 19) and then the caller's from the back (9 down to 1). (With a thief
// taking the next task at the front it ran 1 .. 9.)
TEST(ThreadPool, AThiefTakesARangeFromItsBack) {
  ThreadPool pool(2);
  const auto me = std::this_thread::get_id();
  const int64_t n = 20;
  bool held = false;
  std::vector<int64_t> worker_order;
  for (int round = 0; round < 100 && !held; ++round) {
    std::atomic<int64_t> done{0};
    std::mutex mu;
    std::vector<int64_t> order;
    pool.parallel_for(n, [&](int64_t t) {
      if (std::this_thread::get_id() == me) {
        if (!held && t == 0) {
          held = true;
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (done.load() < n - 1 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
      } else {
        std::lock_guard<std::mutex> lk(mu);
        order.push_back(t);
      }
      done.fetch_add(1);
    });
    if (held) worker_order = order;
  }
  ASSERT_TRUE(held);
  std::vector<int64_t> want;
  for (int64_t t = 10; t < 20; ++t) want.push_back(t);
  for (int64_t t = 9; t >= 1; --t) want.push_back(t);
  EXPECT_EQ(worker_order, want);
}

TEST(ThreadPool, UsesMoreThanOneThreadWhenAsked) {
  ThreadPool pool(2);
  std::atomic<int> in_flight{0}, max_in_flight{0};
  pool.parallel_for(64, [&](int64_t) {
    int now = in_flight.fetch_add(1) + 1;
    int prev = max_in_flight.load();
    while (now > prev && !max_in_flight.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    in_flight.fetch_sub(1);
  });
  EXPECT_EQ(max_in_flight.load(), 2);
}

TEST(ThreadPool, OneThreadRunsInline) {
  ThreadPool pool(1);
  const auto me = std::this_thread::get_id();
  int count = 0;
  pool.parallel_for(10, [&](int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    ++count;
  });
  EXPECT_EQ(count, 10);
}

}  // namespace
}  // namespace anchorage::core

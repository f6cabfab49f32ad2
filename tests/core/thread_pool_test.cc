#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

// Monotonic time for timing summaries and benchmarks.
#pragma once

#include <chrono>
#include <cstdint>

namespace anchorage::core {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double now_seconds() {
  return double(now_ns()) * 1e-9;
}

}  // namespace anchorage::core

// common_prefix: how many leading token ids two sequences share — the question every cache tier
// asks of a prompt (where it parts from the rows in place, a parked conversation, an entry).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

namespace anchorage::core {

inline int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const auto m = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return int64_t(m.first - a.begin());
}

}  // namespace anchorage::core

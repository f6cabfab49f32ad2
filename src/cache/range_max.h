// RangeMax: the largest value of any range of a fixed array of uint32, in time independent of
// the range's length: the suffix index's "most recent occurrence" is the largest start position
// in a range of the suffix array, and a common n-gram's range can hold millions of entries.
// Blocks of kBlock values keep their maxima in a sparse table (log levels over the blocks), so
// a query scans at most two partial blocks and reads two table entries. Memory: about
// 4 * n / kBlock * log2(n / kBlock) bytes (13 MiB at 48 M values).
// Immutable after construction; any thread may query. The array must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace anchorage::cache {

class RangeMax {
 public:
  static constexpr size_t kBlock = 256;

  RangeMax() = default;
  explicit RangeMax(std::span<const uint32_t> values);

  // max(values[begin, end)); requires begin < end <= size.
  uint32_t max(size_t begin, size_t end) const;

 private:
  uint32_t block_range_max(size_t first_block, size_t last_block) const;  // inclusive

  std::span<const uint32_t> values_;
  // levels_[j][b]: the max of blocks [b, b + 2^j).
  std::vector<std::vector<uint32_t>> levels_;
};

}  // namespace anchorage::cache

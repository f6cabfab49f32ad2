#include "cache/range_max.h"

#include <algorithm>
#include <bit>

#include "core/check.h"

namespace anchorage::cache {

RangeMax::RangeMax(std::span<const uint32_t> values) : values_(values) {
  size_t n_blocks = (values.size() + kBlock - 1) / kBlock;
  if (n_blocks == 0) return;
  std::vector<uint32_t> base(n_blocks, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    base[i / kBlock] = std::max(base[i / kBlock], values[i]);
  }
  levels_.push_back(std::move(base));
  for (size_t width = 2; width <= n_blocks; width *= 2) {
    const std::vector<uint32_t>& prev = levels_.back();
    std::vector<uint32_t> next(n_blocks - width + 1);
    for (size_t b = 0; b < next.size(); ++b) next[b] = std::max(prev[b], prev[b + width / 2]);
    levels_.push_back(std::move(next));
  }
}

uint32_t RangeMax::block_range_max(size_t first_block, size_t last_block) const {
  size_t count = last_block - first_block + 1;
  int level = std::bit_width(count) - 1;
  const std::vector<uint32_t>& row = levels_[level];
  return std::max(row[first_block], row[last_block + 1 - (size_t{1} << level)]);
}

uint32_t RangeMax::max(size_t begin, size_t end) const {
  ANCHORAGE_CHECK(begin < end && end <= values_.size());
  size_t first_full = (begin + kBlock - 1) / kBlock;
  size_t end_full = end / kBlock;  // blocks [first_full, end_full) lie wholly inside
  uint32_t best = 0;
  if (first_full >= end_full) {
    for (size_t i = begin; i < end; ++i) best = std::max(best, values_[i]);
    return best;
  }
  for (size_t i = begin; i < first_full * kBlock; ++i) best = std::max(best, values_[i]);
  for (size_t i = end_full * kBlock; i < end; ++i) best = std::max(best, values_[i]);
  return std::max(best, block_range_max(first_full, end_full - 1));
}

}  // namespace anchorage::cache

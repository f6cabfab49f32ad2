#include "core/huge_page_arena.h"

namespace anchorage::core {

uint8_t* HugePageArena::allocate(size_t bytes) {
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  std::lock_guard<std::mutex> lock(mu_);
  allocated_ += rounded;
  if (rounded >= kChunk / 4) {
    chunks_.emplace_back(rounded);
    return chunks_.back().as<uint8_t>();
  }
  if (open_ == SIZE_MAX || used_ + rounded > kChunk) {
    // The rest of the chunk being closed stays untouched, so unbacked: only virtual memory.
    chunks_.emplace_back(kChunk);
    open_ = chunks_.size() - 1;
    used_ = 0;
  }
  uint8_t* p = chunks_[open_].as<uint8_t>() + used_;
  used_ += rounded;
  return p;
}

size_t HugePageArena::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

size_t HugePageArena::mapped_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const AlignedBuffer& c : chunks_) n += c.size();
  return n;
}

}  // namespace anchorage::core

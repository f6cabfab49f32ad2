#include "engine/sequence_state.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/page_populate.h"

namespace anchorage::engine {

SequenceState::SequenceState(core::StateLayout layout, int64_t capacity)
    : layout_(std::move(layout)), capacity_(capacity) {
  ANCHORAGE_CHECK(capacity_ >= 1);
  for (const auto& v : layout_.views) ANCHORAGE_CHECK(v.capacity() == capacity_);
  for (const auto& s : layout_.sections) {
    sections_.emplace_back(size_t(s.bytes()));
    buffers_.sections.push_back(sections_.back().data());
  }
  for (const auto& v : layout_.views) {
    views_.emplace_back(size_t(v.bytes()));
    buffers_.views.push_back(views_.back().data());
  }
  buffers_.capacity = capacity_;
}

void SequenceState::set_length(int64_t n) {
  ANCHORAGE_CHECK(0 <= n && n <= capacity_);
  length_ = n;
}

void SequenceState::reset() {
  for (auto& s : sections_) s.zero();
  length_ = 0;
}

int64_t SequenceState::fault_in_spread_views(const std::stop_token& stop) {
  constexpr int64_t kHugePage = int64_t(2) << 20, kStep = int64_t(32) << 20;
  int64_t asked = 0;
  for (size_t i = 0; i < views_.size(); ++i) {
    const core::TensorSpec& v = layout_.views[i];
    const int64_t bytes = int64_t(views_[i].size());
    if (v.outer_runs() < 2 || bytes / v.outer_runs() >= kHugePage) continue;
    auto* base = static_cast<uint8_t*>(views_[i].data());
    for (int64_t off = 0; off < bytes && !stop.stop_requested(); off += kStep) {
      // Advice: an older kernel (before 5.14) says no, and the first token faults as before.
      core::populate_for_write(base + off, size_t(std::min(kStep, bytes - off)));
      asked += std::min(kStep, bytes - off);
    }
  }
  return asked;
}

}  // namespace anchorage::engine

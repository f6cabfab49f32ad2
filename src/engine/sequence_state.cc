#include "engine/sequence_state.h"

#include <utility>

#include "core/check.h"

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

}  // namespace anchorage::engine

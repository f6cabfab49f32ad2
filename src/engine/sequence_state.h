// SequenceState: the live state of one sequence — one AlignedBuffer per section and per view
// of a StateLayout, the views sized for `capacity` positions — and how many tokens it holds.
// The engine owns one; the caches reach its bytes through the engine (docs/architecture.md §3).
//
// Threading: not thread-safe. Only the engine thread touches it (docs/architecture.md §7).
#pragma once

#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/state_layout.h"
#include "model/architecture.h"

namespace anchorage::engine {

class SequenceState {
 public:
  // Allocates zeroed buffers for `layout`, whose views all have `capacity` positions (checked).
  SequenceState(core::StateLayout layout, int64_t capacity);
  SequenceState(const SequenceState&) = delete;
  SequenceState& operator=(const SequenceState&) = delete;

  const core::StateLayout& layout() const { return layout_; }
  int64_t capacity() const { return capacity_; }
  int64_t length() const { return length_; }
  void set_length(int64_t n);  // 0 <= n <= capacity (checked)

  // A new sequence: sections zeroed (the model's initial state), length 0. View rows are left
  // as they are: rows at or past the length are never read.
  void reset();

  void* section(size_t i) { return sections_[i].data(); }
  const void* section(size_t i) const { return sections_[i].data(); }
  void* view(size_t i) { return views_[i].data(); }
  const void* view(size_t i) const { return views_[i].data(); }

  // The pointers a forward() takes.
  const model::StateBuffers& buffers() const { return buffers_; }

 private:
  core::StateLayout layout_;
  int64_t capacity_ = 0;
  int64_t length_ = 0;
  std::vector<core::AlignedBuffer> sections_;
  std::vector<core::AlignedBuffer> views_;
  model::StateBuffers buffers_;
};

}  // namespace anchorage::engine

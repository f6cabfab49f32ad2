// SequenceState: the live state of one sequence — one AlignedBuffer per section and per view
// of a StateLayout, the views sized for `capacity` positions — and how many tokens it holds.
// The engine owns one; the caches reach its bytes through the engine (docs/architecture.md §3).
//
// Threading: not thread-safe. Only the engine thread touches it (docs/architecture.md §7), but
// for fault_in_spread_views().
#pragma once

#include <cstdint>
#include <stop_token>
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

  // Faults in the pages of every view one position is spread all over (a row of it at least
  // every 2 MiB: K, its token axis last), which a sequence's first token would otherwise fault
  // in a page at a time inside its forward: 0.55 s of the 0.8B shape's first prefill on this
  // project's VMs (docs/performance.md "Start-up"). It maps pages and writes nothing, so it
  // is the one member safe to call from another thread while the engine runs; `stop` is read
  // between steps of 32 MiB. Returns the bytes asked for.
  int64_t fault_in_spread_views(const std::stop_token& stop);

 private:
  core::StateLayout layout_;
  int64_t capacity_ = 0;
  int64_t length_ = 0;
  std::vector<core::AlignedBuffer> sections_;
  std::vector<core::AlignedBuffer> views_;
  model::StateBuffers buffers_;
};

}  // namespace anchorage::engine

// SectionCopy and RowCopy: a cache's own copies of an engine's state, taken and written back
// through the state contract only (docs/architecture.md §3): layout(), settle(), the raw section
// and view buffers and resume_at(). Every tier stores these and nothing model-specific.
//
// - A SectionCopy holds every section whole: an anchor (the recurrent state at one position).
// - A RowCopy holds rows [begin, end) of every view, packed along each view's token axis.
//
// Capturing calls engine.settle() first, as the contract requires. Value types; an Engine is
// touched only on its own thread (the engine thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

class SectionCopy {
 public:
  SectionCopy() = default;
  // The buffers go back to the SectionPool for the next capture (section_pool.h).
  ~SectionCopy();
  SectionCopy(SectionCopy&& o) noexcept;
  SectionCopy& operator=(SectionCopy&& o) noexcept;
  // The engine's sections as they are now, at `position` (the engine's length).
  static SectionCopy capture(engine::Engine& engine);
  // Buffers for every section of `layout`, to be filled from elsewhere (a disk file) through
  // mutable_part() before write_back: zeroed, or with kNone left as the pool hands them over,
  // for a reader that writes every byte or throws the copy away (a read of a 1,024-row block
  // into zeroed pages cleared each page twice: the restore's largest cost after the sums).
  static SectionCopy allocate(const core::StateLayout& layout, int64_t position,
                              core::AlignedBuffer::Fill fill = core::AlignedBuffer::Fill::kZero);
  // A copy of this copy (its buffers from the pool).
  SectionCopy clone() const;

  bool empty() const { return parts_.empty(); }
  int64_t position() const { return position_; }
  int64_t bytes() const { return bytes_; }
  // Writes every section back (the views and the length are the caller's business).
  // InvalidArgument when the engine's layout differs from the one captured.
  core::Status write_back(engine::Engine& engine) const;
  // Bit equality of the stored sections (tests, and a cheap "already kept" check).
  bool same_bytes(const SectionCopy& other) const;
  const void* part(size_t i) const { return parts_[i].data(); }
  void* mutable_part(size_t i) { return parts_[i].data(); }
  size_t parts() const { return parts_.size(); }
  size_t part_bytes(size_t i) const { return parts_[i].size(); }

 private:
  // Buffers for every section from the pool, their contents undefined.
  static SectionCopy with_buffers(const core::StateLayout& layout, int64_t position);

  int64_t position_ = 0;
  int64_t bytes_ = 0;
  std::vector<core::AlignedBuffer> parts_;  // one per layout section
};

class RowCopy {
 public:
  RowCopy() = default;
  // The buffers go back to the SectionPool too: a disk read lands every block in a copy of the
  // same sizes and lets it go once written back (section_pool.h).
  ~RowCopy();
  RowCopy(RowCopy&& o) noexcept;
  RowCopy& operator=(RowCopy&& o) noexcept;
  // Rows [begin, end) of every view; requires 0 <= begin <= end <= engine.capacity().
  static RowCopy capture(engine::Engine& engine, int64_t begin, int64_t end);
  // Packed buffers for rows [begin, end) of every view of `layout` (filled through
  // mutable_part() before write_back): zeroed, or with kNone as SectionCopy::allocate's.
  static RowCopy allocate(const core::StateLayout& layout, int64_t begin, int64_t end,
                          core::AlignedBuffer::Fill fill = core::AlignedBuffer::Fill::kZero);

  bool empty() const { return end_ == begin_; }
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t bytes() const { return bytes_; }
  // Writes rows [begin, end) back into the views; InvalidArgument on another layout.
  core::Status write_back(engine::Engine& engine) const;
  // Writes back only rows [a, b) ⊆ [begin, end).
  core::Status write_back(engine::Engine& engine, int64_t a, int64_t b) const;
  // Only view i's rows [a, b): threads may write a copy's views back apart.
  core::Status write_back_view(engine::Engine& engine, size_t i, int64_t a, int64_t b) const;
  // View i's rows [a, b) from `packed`, rows [begin, end) of the view packed as a RowCopy
  // packs them but held elsewhere (a spill frame's raw bytes, used where they were read).
  static core::Status write_back_packed(engine::Engine& engine, size_t i,
                                        std::span<const std::byte> packed, int64_t begin,
                                        int64_t end, int64_t a, int64_t b);
  // Copies rows [a, b) of `src` (a copy of the same `layout`) into this copy; [a, b) must lie
  // in both. Assembles a block from pieces held elsewhere (a park's blocks and the head).
  core::Status copy_rows(const core::StateLayout& layout, const RowCopy& src, int64_t a, int64_t b);
  const void* part(size_t i) const { return parts_[i].data(); }
  void* mutable_part(size_t i) { return parts_[i].data(); }
  size_t parts() const { return parts_.size(); }
  size_t part_bytes(size_t i) const { return parts_[i].size(); }

 private:
  core::Status check_view(const engine::Engine& engine, size_t i, int64_t a, int64_t b) const;
  static core::Status check_packed(const engine::Engine& engine, size_t i, size_t packed_bytes,
                                   int64_t begin, int64_t end, int64_t a, int64_t b);
  static void copy_packed(engine::Engine& engine, size_t i, const void* packed, int64_t begin,
                          int64_t end, int64_t a, int64_t b);
  // Buffers for rows [begin, end) of every view from the pool, their contents undefined.
  static RowCopy with_buffers(const core::StateLayout& layout, int64_t begin, int64_t end);

  int64_t begin_ = 0;
  int64_t end_ = 0;
  int64_t bytes_ = 0;
  std::vector<core::AlignedBuffer> parts_;  // one per layout view, packed rows
};

// True when two layouts have the same sections and views (names, dtypes, shapes, axes):
// what makes a copy from one engine valid for another.
bool same_layout(const core::StateLayout& a, const core::StateLayout& b);

}  // namespace anchorage::cache

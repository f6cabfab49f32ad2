// SectionPool: the buffers of state copies that were let go, kept for the next copy of the sizes.
//
// A cache takes a copy of the engine's sections at every anchor line, at every prefill's end
// and after every answer, and lets an older one go about as often. A fresh buffer costs its
// first touch: the kernel faults in and clears every page (small pages for copies, and why:
// core/aligned_buffer.h), several ms for the 5 MB of `small`'s sections on a loaded machine,
// where copying into a buffer already touched takes 0.3 ms. So a released copy's buffers wait
// here for the next copy of the same sizes (docs/cache.md "Memory budget"; the effect on a
// request: docs/performance.md "Overheads around the engine").
//
// Row copies (RowCopy) of a disk read's blocks go through it too: every block of a restore
// has the same sizes. Bounded: at most kMaxSets sets of buffers and kMaxBytes in all; a new
// set pushes the oldest out, and a set larger than kMaxBytes (a park's rows) is freed. held_bytes()
// is reported with the cache's stats. Thread-safe: copies are released on the engine thread and on
// the disk writers'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "core/aligned_buffer.h"

namespace anchorage::cache {

class SectionPool {
 public:
  static constexpr size_t kMaxSets = 4;
  static constexpr size_t kMaxBytes = size_t(256) << 20;

  // The process's pool (every SectionCopy uses it).
  static SectionPool& instance();

  // Buffers of exactly `sizes` (one per section, in order), small pages: a recycled set, or
  // new buffers; their contents are undefined either way.
  std::vector<core::AlignedBuffer> take(std::span<const size_t> sizes);
  // Keeps `parts` for a later take(), the oldest sets freed to stay under the bounds.
  void give(std::vector<core::AlignedBuffer> parts);
  size_t held_bytes() const;
  // Frees every held set (tests).
  void clear();

  // Spare sets ready before they are asked for: a follow-up's prefill copies the state at its
  // lines (docs/cache.md "Branch points") while every older copy is still held, so the pool
  // has nothing to give and each copy pays its first touch on the request path. Called in the
  // engine's idle moment after an answer: until the pool holds `sets` sets of `sizes` (at
  // most kMaxSets - 1, so a released set still finds room), a new set is faulted in, one at a
  // time, while may_add(its bytes) says the memory budget allows it and should_stop() says no
  // request waits. Returns the sets added.
  size_t stock(std::span<const size_t> sizes, size_t sets,
               const std::function<bool(size_t bytes)>& may_add,
               const std::function<bool()>& should_stop);
  // Frees the oldest sets until `want` bytes went or none is left; the bytes freed.
  size_t shed(size_t want);

 private:
  mutable std::mutex mu_;
  std::vector<std::vector<core::AlignedBuffer>> sets_;
  size_t held_ = 0;
};

// The pool as the memory budget's cheapest level ("spare_states"): its sets are the first
// bytes given back under pressure, since losing them only makes a later copy pay its first
// touch (cache_level.h).
class SparePoolLevel final : public CacheLevel {
 public:
  explicit SparePoolLevel(SectionPool& pool) : pool_(pool) {}
  std::string_view level_name() const override { return "spare_states"; }
  int64_t held_bytes() const override { return int64_t(pool_.held_bytes()); }
  int64_t shed(int64_t want) override { return int64_t(pool_.shed(size_t(want))); }

 private:
  SectionPool& pool_;
};

}  // namespace anchorage::cache

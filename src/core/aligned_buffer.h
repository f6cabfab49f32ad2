// AlignedBuffer: an owned, zero-filled byte buffer aligned for AVX-512 (64 B), to 4 KiB from
// 4 KiB on (O_DIRECT's block, core::Fs); buffers of 2 MiB or more are 2 MiB aligned and advised for
// transparent huge pages, because the attention reads K with large strides (docs/kernels.md) and 4
// KiB pages thrash the TLB. A zeroed buffer of 2 MiB or more is an anonymous mapping, zero
// already: its pages are faulted in (zeroed by the kernel) when first touched, not all at
// construction. Not thread-safe; move-only.
//
// A cache's copies of the state (cache/state_copy.h) ask for small pages and no zeroing: they
// are only ever copied whole, and the first touch of an advised buffer may wait for the kernel
// to compact memory into huge pages (with THP `defrag` on `madvise`, Debian's default): tens of
// ms for 5 MB on a loaded, fragmented machine, against a few ms with small pages (the effect on
// a request: docs/performance.md "Overheads around the engine").
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::core {

class AlignedBuffer {
 public:
  enum class Pages { kHugeWhenLarge, kSmall };
  enum class Fill { kZero, kNone };  // kNone: the contents are undefined until written

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes, Pages pages = Pages::kHugeWhenLarge,
                         Fill fill = Fill::kZero);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& o) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void zero();

 private:
  void release();

  void* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // > 0: an anonymous mapping of these bytes (munmap), else malloc's
};

}  // namespace anchorage::core

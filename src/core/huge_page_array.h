// HugePageArray<T>: a fixed-size array of trivially copyable T, zero bits to start with, in a
// core::AlignedBuffer, so that an array of 2 MiB or more sits on transparent huge pages where a
// std::vector's would be malloc's 4 KiB pages, and is fresh zero pages of an anonymous mapping,
// never filled (a table whose empty slot is zero bits needs no pass to start). For the tables a
// load builds once and then reads at random (a tokenizer's hash tables, 4-8 MB each): on a VM
// whose host backs guest memory at its first write, each fresh 4 KiB page costs about 10 us
// (docs/performance.md "Start-up"), and random reads over megabytes of small pages miss the
// TLB. Move-only.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "core/aligned_buffer.h"

namespace anchorage::core {

template <typename T>
class HugePageArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  HugePageArray() = default;
  // n elements of zero bits: an array of 2 MiB or more is fresh anonymous memory, zero already,
  // and a page is first touched where it is first written.
  explicit HugePageArray(size_t n)
      : buf_(n * sizeof(T), AlignedBuffer::Pages::kHugeWhenLarge, AlignedBuffer::Fill::kZero),
        n_(n) {}
  HugePageArray(HugePageArray&& o) noexcept : buf_(std::move(o.buf_)), n_(o.n_) { o.n_ = 0; }
  HugePageArray& operator=(HugePageArray&& o) noexcept {
    buf_ = std::move(o.buf_);
    n_ = o.n_;
    o.n_ = 0;
    return *this;
  }

  T* data() { return buf_.as<T>(); }
  const T* data() const { return buf_.as<T>(); }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + n_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }

 private:
  AlignedBuffer buf_;
  size_t n_ = 0;
};

}  // namespace anchorage::core

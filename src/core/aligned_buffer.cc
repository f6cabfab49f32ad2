#include "core/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/check.h"

namespace anchorage::core {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kPopulateFrom = size_t(256) << 10;
}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes, Pages pages, Fill fill) : size_(bytes) {
  if (bytes == 0) return;
  // 4 KiB for anything a page or more: O_DIRECT reads and writes (core::Fs) go straight
  // into such a buffer.
  const bool huge = pages == Pages::kHugeWhenLarge && bytes >= kHugePage;
  size_t align = huge ? kHugePage : bytes >= 4096 ? 4096 : 64;
  size_t rounded = (bytes + align - 1) / align * align;
  data_ = std::aligned_alloc(align, rounded);
  ANCHORAGE_CHECK_MSG(data_ != nullptr, "out of memory");
  if (huge) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only
  // Small pages faulted in by one call rather than one trap per page on first touch (a
  // buffer about to be filled whole; Linux 5.14+, advice only: an older kernel says EINVAL).
  if (!huge && rounded >= kPopulateFrom) madvise(data_, rounded, MADV_POPULATE_WRITE);
  if (fill == Fill::kZero) std::memset(data_, 0, rounded);
}

AlignedBuffer::~AlignedBuffer() {
  std::free(data_);
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void AlignedBuffer::zero() {
  if (data_) std::memset(data_, 0, size_);
}

}  // namespace anchorage::core

#include "core/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/check.h"
#include "core/page_populate.h"

namespace anchorage::core {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes, Pages pages, Fill fill) : size_(bytes) {
  if (bytes == 0) return;
  // 4 KiB for anything a page or more: O_DIRECT reads and writes (core::Fs) go straight
  // into such a buffer.
  const bool huge = pages == Pages::kHugeWhenLarge && bytes >= kHugePage;
  size_t align = huge ? kHugePage : bytes >= 4096 ? 4096 : 64;
  size_t rounded = (bytes + align - 1) / align * align;
  if (fill == Fill::kZero && rounded >= kHugePage) {
    // Zeroed by the kernel, page by page at first touch: the engine's K/V rows for a 32k
    // context (200 MB on `small`) were memset at start-up, which with THP advice waited for
    // the kernel to compact memory (0.03-1.9 s from one start to the next); now the rows a
    // prefill writes are the pages it touches.
    const size_t span = rounded + align;
    void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ANCHORAGE_CHECK_MSG(p != MAP_FAILED, "out of memory");
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    const uintptr_t start = (base + align - 1) / align * align;
    if (start > base) munmap(p, start - base);
    if (const uintptr_t end = base + span, used = start + rounded; end > used)
      munmap(reinterpret_cast<void*>(used), end - used);
    data_ = reinterpret_cast<void*>(start);
    mapped_ = rounded;
    if (huge) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only
    if (!huge) populate_for_write(data_, rounded);
    return;
  }
  data_ = std::aligned_alloc(align, rounded);
  ANCHORAGE_CHECK_MSG(data_ != nullptr, "out of memory");
  if (huge) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only
  // Small pages faulted in by one call rather than one trap per page on first touch (a
  // buffer about to be filled whole).
  if (!huge) populate_for_write(data_, rounded);
  if (fill == Fill::kZero) std::memset(data_, 0, rounded);
}

void AlignedBuffer::release() {
  if (data_ == nullptr) return;
  if (mapped_ > 0) {
    munmap(data_, mapped_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
}

AlignedBuffer::~AlignedBuffer() {
  release();
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& o) noexcept
    : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = 0;
  }
  return *this;
}

void AlignedBuffer::zero() {
  if (data_) std::memset(data_, 0, size_);
}

}  // namespace anchorage::core

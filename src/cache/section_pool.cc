#include "cache/section_pool.h"

#include <algorithm>

namespace anchorage::cache {

namespace {

size_t set_bytes(const std::vector<core::AlignedBuffer>& parts) {
  size_t n = 0;
  for (const core::AlignedBuffer& b : parts) n += b.size();
  return n;
}

bool same_sizes(const std::vector<core::AlignedBuffer>& parts, std::span<const size_t> sizes) {
  return parts.size() == sizes.size() &&
         std::equal(parts.begin(), parts.end(), sizes.begin(),
                    [](const core::AlignedBuffer& b, size_t n) { return b.size() == n; });
}

}  // namespace

SectionPool& SectionPool::instance() {
  static SectionPool pool;
  return pool;
}

std::vector<core::AlignedBuffer> SectionPool::take(std::span<const size_t> sizes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = sets_.size(); i-- > 0;) {
      if (!same_sizes(sets_[i], sizes)) continue;
      std::vector<core::AlignedBuffer> parts = std::move(sets_[i]);
      sets_.erase(sets_.begin() + ptrdiff_t(i));
      held_ -= set_bytes(parts);
      return parts;
    }
  }
  std::vector<core::AlignedBuffer> parts;
  parts.reserve(sizes.size());
  for (size_t n : sizes)
    parts.emplace_back(n, core::AlignedBuffer::Pages::kSmall, core::AlignedBuffer::Fill::kNone);
  return parts;
}

void SectionPool::give(std::vector<core::AlignedBuffer> parts) {
  const size_t n = set_bytes(parts);
  if (n == 0 || n > kMaxBytes) return;                    // nothing to reuse, or too large to hold
  std::vector<std::vector<core::AlignedBuffer>> dropped;  // freed after the lock
  std::lock_guard<std::mutex> lock(mu_);
  // The newest set is the likeliest to be asked for again (the next anchor, the next block of
  // the same read): the oldest make room, so a few odd sizes never keep the pool from working.
  while (!sets_.empty() && (sets_.size() >= kMaxSets || held_ + n > kMaxBytes)) {
    held_ -= set_bytes(sets_.front());
    dropped.push_back(std::move(sets_.front()));
    sets_.erase(sets_.begin());
  }
  held_ += n;
  sets_.push_back(std::move(parts));
}

size_t SectionPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

size_t SectionPool::stock(std::span<const size_t> sizes, size_t sets,
                          const std::function<bool(size_t bytes)>& may_add,
                          const std::function<bool()>& should_stop) {
  size_t bytes = 0;
  for (size_t n : sizes) bytes += n;
  if (bytes == 0 || bytes > kMaxBytes) return 0;
  sets = std::min(sets, kMaxSets - 1);
  size_t added = 0;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t have = 0;
      for (const std::vector<core::AlignedBuffer>& s : sets_) have += same_sizes(s, sizes);
      // A set that would push another out, or pass the bytes bound, is not added.
      if (have >= sets || sets_.size() >= kMaxSets || held_ + bytes > kMaxBytes) return added;
    }
    if (should_stop() || !may_add(bytes)) return added;
    // Written here, byte by byte, so every page is in place whatever its size. Faulting them
    // in (MADV_POPULATE_WRITE, core/page_populate.h) is not enough on a virtual machine whose
    // host backs guest memory at its first write: on a Firecracker guest, a capture into a
    // populated but unwritten 4.9 MB set took 5.6-6 ms, into a written one 0.3 ms
    // (scripts/probe_first_write.py shows the same without the server).
    std::vector<core::AlignedBuffer> parts;
    parts.reserve(sizes.size());
    for (size_t n : sizes) {
      parts.emplace_back(n, core::AlignedBuffer::Pages::kSmall, core::AlignedBuffer::Fill::kNone);
      parts.back().zero();
    }
    give(std::move(parts));
    ++added;
  }
}

size_t SectionPool::shed(size_t want) {
  std::vector<std::vector<core::AlignedBuffer>> dropped;  // freed after the lock
  size_t freed = 0;
  std::lock_guard<std::mutex> lock(mu_);
  while (!sets_.empty() && freed < want) {
    const size_t n = set_bytes(sets_.front());
    freed += n;
    held_ -= n;
    dropped.push_back(std::move(sets_.front()));
    sets_.erase(sets_.begin());
  }
  return freed;
}

void SectionPool::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  sets_.clear();
  held_ = 0;
}

}  // namespace anchorage::cache

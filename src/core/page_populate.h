// populate_for_write: the pages under a freshly allocated range faulted in by one madvise call
// before it is filled, instead of one trap per 4 KiB page at first touch. On the Firecracker
// guest the project measures on, writing 20 MB of fresh pages took 57 ms with a trap a page, and
// 3 ms for the call plus 26 ms for the first writes after it (the host's own page tables are
// still filled at the first touch); a server's start made ~4,300 such traps parsing its GGUF
// file and building its tokenizer (docs/performance.md "Start-up"). On bare metal a trap is
// ~0.5 us and the call saves most of it. Advice only: contents are unchanged, and a kernel
// before 5.14 (no MADV_POPULATE_WRITE) leaves the pages to fault as before.
#pragma once

#include <cstddef>
#include <vector>

namespace anchorage::core {

// Faults in, for writing, every page holding a byte of [p, p + bytes), if bytes is at least
// kPopulateFromBytes (below it, the call costs about what it saves). The range must be
// writable memory of this process (a heap allocation or an anonymous mapping): a page holding
// one of its bytes is, so rounding out to whole pages touches nothing else.
// True when the kernel faulted them in (false below the threshold, or from a kernel that does
// not know the call).
constexpr size_t kPopulateFromBytes = size_t(64) << 10;
bool populate_for_write(void* p, size_t bytes);

// v.reserve(n) with the new storage populated: for a vector about to be filled to n.
template <typename T, typename A>
void reserve_populated(std::vector<T, A>& v, size_t n) {
  v.reserve(n);
  populate_for_write(v.data(), v.capacity() * sizeof(T));
}

// A vector of n value-initialized T whose storage was populated first.
template <typename T>
std::vector<T> populated_vector(size_t n) {
  std::vector<T> v;
  reserve_populated(v, n);
  v.resize(n);
  return v;
}

}  // namespace anchorage::core

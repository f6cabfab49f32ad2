// HugePageArena: memory for many buffers that live and die together (a model's weights), cut
// from chunks of 32 MiB that core::AlignedBuffer maps and advises for transparent huge pages.
//
// Why: a buffer under 2 MiB gets 4 KiB pages of its own (AlignedBuffer), and on a VM whose host
// backs guest memory at its first write, a fresh 4 KiB page costs about 10 us while a fresh
// 2 MiB page costs about what 20-300 small ones do (docs/performance.md "Start-up"). Most of a
// small model's weight tensors are under 2 MiB (the 0.8B shape's per-layer Q4_K matrices are
// 0.1-2.0 MB), so half of its packed weights were on small pages and their first writes were
// most of the load. Cut from shared chunks they are on huge pages, and decode's TLB gains too.
//
// The memory is zero when handed out (fresh anonymous pages) and is never reused: there is no
// free. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/aligned_buffer.h"

namespace anchorage::core {

class HugePageArena {
 public:
  static constexpr size_t kChunk = size_t(32) << 20;
  static constexpr size_t kAlign = 64;  // an AVX-512 vector, a cache line

  HugePageArena() = default;
  HugePageArena(const HugePageArena&) = delete;
  HugePageArena& operator=(const HugePageArena&) = delete;

  // `bytes` of zeroed memory, kAlign-aligned, valid as long as the arena. A request of a
  // quarter chunk or more gets a chunk of its own (a large tensor would otherwise leave most
  // of the chunk it closes unused).
  uint8_t* allocate(size_t bytes);

  // Bytes handed out and bytes mapped for them (tests check the arena's bookkeeping).
  size_t allocated_bytes() const;
  size_t mapped_bytes() const;

 private:
  mutable std::mutex mu_;
  std::vector<AlignedBuffer> chunks_;  // the shared chunk being cut is chunks_[open_]
  size_t open_ = SIZE_MAX;
  size_t used_ = 0;  // bytes cut from chunks_[open_]
  size_t allocated_ = 0;
};

}  // namespace anchorage::core

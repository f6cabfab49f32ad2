// crc32c (Castagnoli, the iSCSI polynomial): the checksum of every cache file's header and
// sections (docs/formats/disk-tier.md). Computed by ISA-L's crc32_iscsi, which picks the
// CPU's instruction (SSE4.2 crc32 / carry-less multiply) at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace anchorage::core {

// The crc32c of data[0, n) continuing from `crc`, the crc32c of what came before
// (0 for nothing): crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(const void* data, size_t n) {
  return crc32c_extend(0, data, n);
}
inline uint32_t crc32c(std::span<const std::byte> data) {
  return crc32c(data.data(), data.size());
}

// Stored crcs are masked (docs/style.md §3): the crc of bytes that themselves hold a crc is a
// weak check, so what goes to disk is a rotated and offset value, never the raw crc.
inline uint32_t crc32c_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
inline uint32_t crc32c_unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace anchorage::core

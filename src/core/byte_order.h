// Little-endian integers in byte buffers: every on-disk format encodes with these, never with a
// struct's memory (docs/style.md §2), so a file reads the same on any host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::core {

inline void put_u32le(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = std::byte((v >> (8 * i)) & 0xff);
}
inline void put_u64le(std::byte* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = std::byte((v >> (8 * i)) & 0xff);
}
inline uint32_t get_u32le(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(std::to_integer<uint8_t>(p[i])) << (8 * i);
  return v;
}
inline uint64_t get_u64le(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(std::to_integer<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace anchorage::core

// The byte-plane loops of spill_planes.h, compiled once per ISA (spill_planes.cc and
// spill_planes_avx2.cc include this header; nothing else does).
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::cache::planes_detail {
namespace {

template <size_t E>
void split_fixed(const uint8_t* __restrict src, size_t m, uint8_t* __restrict dst) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < E; ++b) dst[b * m + i] = src[i * E + b];
  }
}

template <size_t E>
void join_fixed(const uint8_t* __restrict src, size_t m, uint8_t* __restrict dst) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < E; ++b) dst[i * E + b] = src[b * m + i];
  }
}

inline void split_any(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  switch (e) {
    case 2:
      return split_fixed<2>(src, m, dst);
    case 4:
      return split_fixed<4>(src, m, dst);
    case 8:
      return split_fixed<8>(src, m, dst);
    default:
      for (size_t i = 0; i < m; ++i) {
        for (size_t b = 0; b < e; ++b) dst[b * m + i] = src[i * e + b];
      }
  }
}

inline void join_any(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  switch (e) {
    case 2:
      return join_fixed<2>(src, m, dst);
    case 4:
      return join_fixed<4>(src, m, dst);
    case 8:
      return join_fixed<8>(src, m, dst);
    default:
      for (size_t i = 0; i < m; ++i) {
        for (size_t b = 0; b < e; ++b) dst[i * e + b] = src[b * m + i];
      }
  }
}

}  // namespace
}  // namespace anchorage::cache::planes_detail

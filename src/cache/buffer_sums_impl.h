// The loop of buffer_sums.h, compiled once per ISA (buffer_sums.cc and buffer_sums_avx2.cc
// include this header; nothing else does).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace anchorage::cache::sums_detail {
namespace {

static_assert(std::endian::native == std::endian::little, "words are read little-endian");

// Words [0, words) of p. The weight i + 1 is split as base + (j + 1) with j < 2^31 inside a
// stretch, so the multiply the compiler vectorizes is 32×32→64; base·(the stretch's plain sum)
// is added once per stretch (mod 2^64 the same value as the word-by-word sum).
inline std::array<uint64_t, 2> sums_any(const std::byte* p, size_t words) {
  constexpr size_t kStretch = size_t(1) << 31;
  uint64_t plain = 0, weighted = 0;
  for (size_t base = 0; base < words; base += kStretch) {
    const uint32_t n = uint32_t(words - base < kStretch ? words - base : kStretch);
    const std::byte* q = p + 4 * base;
    uint64_t s = 0, t = 0;
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t w;
      std::memcpy(&w, q + 4 * size_t(j), 4);
      s += w;
      t += uint64_t(j + 1) * w;
    }
    plain += s;
    weighted += t + uint64_t(base) * s;
  }
  return {plain, weighted};
}

}  // namespace
}  // namespace anchorage::cache::sums_detail

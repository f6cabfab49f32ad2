// buffer_sums: the two 64-bit sums the session spill keeps per buffer of a block and checks on
// every read (docs/session-spill.md "Blocks"): the plain sum of the buffer's 32-bit words
// (little-endian, the tail zero-padded) and Σ (i + 1)·w_i, both mod 2^64. Cheap at memory speed,
// and a swapped pair of words or a flipped bit changes one of them. The files on disk hold
// these values: any faster form must give the same bits (tests/cache/buffer_sums_test.cc).
//
// The loop is plain code the compiler vectorizes (a 32×32→64 multiply per word): the files are
// built at -O3, the scalar one for any x86-64 and the _avx2 one reached through
// core::active_isa, as the byte planes are (spill_planes.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace anchorage::cache {

std::array<uint64_t, 2> buffer_sums(std::span<const std::byte> data);

// The same two sums taken over a buffer handed over in pieces, in order, of any lengths: the
// restore sums a frame's bytes piece by piece as its crc reads them, while they are in cache.
// value() after add(a), add(b) equals buffer_sums(a + b).
class BufferSums {
 public:
  void add(std::span<const std::byte> piece);
  std::array<uint64_t, 2> value() const;

 private:
  void add_words(const std::byte* p, size_t words);

  uint64_t plain_ = 0, weighted_ = 0;
  uint64_t words_ = 0;    // whole words summed so far
  std::byte carry_[4]{};  // the bytes of a word a piece ended inside
  size_t carried_ = 0;
};

namespace sums_detail {
std::array<uint64_t, 2> sums_avx2(const std::byte* p, size_t words);
}  // namespace sums_detail

}  // namespace anchorage::cache

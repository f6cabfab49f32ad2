// buffer_sums: the values the spill's files hold, whatever path computes them.
#include "cache/buffer_sums.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/isa.h"

namespace anchorage::cache {
namespace {

// The definition, word by word (the code the files were first written with).
std::array<uint64_t, 2> reference_sums(std::span<const std::byte> data) {
  uint64_t plain = 0, weighted = 0;
  const size_t words = (data.size() + 3) / 4;
  for (size_t i = 0; i < words; ++i) {
    uint8_t b[4] = {};
    for (size_t k = 0; k < 4 && 4 * i + k < data.size(); ++k) b[k] = uint8_t(data[4 * i + k]);
    const uint64_t w =
        uint64_t(b[0]) | uint64_t(b[1]) << 8 | uint64_t(b[2]) << 16 | uint64_t(b[3]) << 24;
    plain += w;
    weighted += uint64_t(i + 1) * w;
  }
  return {plain, weighted};
}

TEST(BufferSums, SeeSwappedWordsAndFlippedBits) {
  std::vector<std::byte> a(64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::byte(i * 7 + 1);
  const auto s = buffer_sums(a);
  std::vector<std::byte> swapped = a;
  std::swap_ranges(swapped.begin(), swapped.begin() + 4, swapped.begin() + 8);
  const auto t = buffer_sums(swapped);
  EXPECT_EQ(s[0], t[0]) << "the plain sum cannot see a swap";
  EXPECT_NE(s[1], t[1]) << "the weighted one does";
  std::vector<std::byte> flipped = a;
  flipped[33] ^= std::byte{0x01};
  EXPECT_NE(buffer_sums(flipped), s);
  // A tail shorter than a word counts, zero-padded.
  std::vector<std::byte> odd(a.begin(), a.begin() + 63);
  EXPECT_NE(buffer_sums(odd), buffer_sums(std::span(a).first(60)));
}

// Every ISA's path gives the reference's bits on lengths and offsets of every remainder, with
// words near 2^32 (so the 64-bit sums wrap) and random ones.
TEST(BufferSums, EveryPathEqualsTheWordByWordDefinition) {
  std::mt19937_64 rng(7);
  std::vector<std::byte> buf(1 << 20);
  for (std::byte& b : buf) b = std::byte(rng());
  std::fill(buf.begin(), buf.begin() + 4096, std::byte{0xFF});
  const core::Isa saved = core::active_isa();
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2, core::Isa::kAvx512}) {
    core::set_active_isa(isa);
    for (size_t offset : {0, 1, 2, 3, 5}) {
      for (size_t n : {0, 1, 3, 4, 7, 31, 64, 1001, 4096 + 3, (1 << 19) + 2, (1 << 20) - 8}) {
        const std::span<const std::byte> s(buf.data() + offset, n);
        EXPECT_EQ(buffer_sums(s), reference_sums(s))
            << core::isa_name(core::active_isa()) << " offset " << offset << " n " << n;
      }
    }
  }
  core::set_active_isa(saved);
}

// Pieces of any lengths, words cut anywhere, give the whole buffer's sums (the restore sums a
// frame piece by piece as its crc reads it).
TEST(BufferSums, PiecesInOrderGiveTheWholeBuffersSums) {
  std::mt19937_64 rng(11);
  std::vector<std::byte> buf(200'003);
  for (std::byte& b : buf) b = std::byte(rng());
  const core::Isa saved = core::active_isa();
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2}) {
    core::set_active_isa(isa);
    for (size_t n : {size_t(0), size_t(3), size_t(4097), buf.size()}) {
      const std::span<const std::byte> whole(buf.data(), n);
      for (size_t cut : {1, 2, 3, 5, 4096, 65'536, 70'001}) {
        BufferSums s;
        for (size_t at = 0; at < n; at += cut) s.add(whole.subspan(at, std::min(cut, n - at)));
        EXPECT_EQ(s.value(), reference_sums(whole)) << "n " << n << " cut " << cut;
      }
      // Empty pieces change nothing.
      BufferSums s;
      s.add({});
      s.add(whole);
      s.add({});
      EXPECT_EQ(s.value(), reference_sums(whole));
    }
  }
  core::set_active_isa(saved);
}

}  // namespace
}  // namespace anchorage::cache

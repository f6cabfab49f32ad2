#include "cache/buffer_sums.h"

#include <algorithm>
#include <cstring>

#include "cache/buffer_sums_impl.h"
#include "core/isa.h"

namespace anchorage::cache {

std::array<uint64_t, 2> buffer_sums(std::span<const std::byte> data) {
  BufferSums s;
  s.add(data);
  return s.value();
}

// A piece's words weigh from 1 in the loop; the words before it move every weight by words_.
void BufferSums::add_words(const std::byte* p, size_t words) {
  const std::array<uint64_t, 2> s = core::active_isa() != core::Isa::kScalar
                                        ? sums_detail::sums_avx2(p, words)
                                        : sums_detail::sums_any(p, words);
  plain_ += s[0];
  weighted_ += s[1] + words_ * s[0];
  words_ += words;
}

void BufferSums::add(std::span<const std::byte> piece) {
  if (carried_ > 0) {  // finish the word the last piece ended inside
    const size_t take = std::min(4 - carried_, piece.size());
    std::memcpy(carry_ + carried_, piece.data(), take);
    carried_ += take;
    piece = piece.subspan(take);
    if (carried_ < 4) return;
    add_words(carry_, 1);
    carried_ = 0;
  }
  const size_t words = piece.size() / 4;
  if (words > 0) add_words(piece.data(), words);
  carried_ = piece.size() % 4;
  std::memcpy(carry_, piece.data() + 4 * words, carried_);
}

// A last word shorter than 4 bytes counts zero-padded.
std::array<uint64_t, 2> BufferSums::value() const {
  if (carried_ == 0) return {plain_, weighted_};
  std::byte last[4] = {};
  std::memcpy(last, carry_, carried_);
  uint32_t w;
  std::memcpy(&w, last, 4);
  return {plain_ + w, weighted_ + (words_ + 1) * w};
}

}  // namespace anchorage::cache

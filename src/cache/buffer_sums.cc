#include "cache/buffer_sums.h"

#include <cstring>

#include "cache/buffer_sums_impl.h"
#include "core/isa.h"

namespace anchorage::cache {

std::array<uint64_t, 2> buffer_sums(std::span<const std::byte> data) {
  const size_t words = data.size() / 4;
  std::array<uint64_t, 2> s = core::active_isa() != core::Isa::kScalar
                                  ? sums_detail::sums_avx2(data.data(), words)
                                  : sums_detail::sums_any(data.data(), words);
  if (const size_t tail = data.size() % 4; tail != 0) {
    std::byte last[4] = {};
    std::memcpy(last, data.data() + 4 * words, tail);
    uint32_t w;
    std::memcpy(&w, last, 4);
    s[0] += w;
    s[1] += uint64_t(words + 1) * w;
  }
  return s;
}

}  // namespace anchorage::cache

// buffer_sums' loop built with AVX2 (CMakeLists.txt gives this file the AVX2 flags and -O3).
#include "cache/buffer_sums.h"
#include "cache/buffer_sums_impl.h"

namespace anchorage::cache::sums_detail {

std::array<uint64_t, 2> sums_avx2(const std::byte* p, size_t words) {
  return sums_any(p, words);
}

}  // namespace anchorage::cache::sums_detail

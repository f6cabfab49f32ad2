// The byte-plane loops built with AVX2 (CMakeLists.txt gives this file the AVX2 flags and -O3).
#include "cache/spill_planes.h"
#include "cache/spill_planes_impl.h"

namespace anchorage::cache::planes_detail {

void split_avx2(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  split_any(src, m, e, dst);
}

void join_avx2(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  join_any(src, m, e, dst);
}

}  // namespace anchorage::cache::planes_detail

#include "cache/spill_planes.h"

#include "cache/spill_planes_impl.h"
#include "core/isa.h"

namespace anchorage::cache {

void split_byte_planes(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  if (core::active_isa() != core::Isa::kScalar) return planes_detail::split_avx2(src, m, e, dst);
  planes_detail::split_any(src, m, e, dst);
}

void join_byte_planes(const uint8_t* src, size_t m, size_t e, uint8_t* dst) {
  if (core::active_isa() != core::Isa::kScalar) return planes_detail::join_avx2(src, m, e, dst);
  planes_detail::join_any(src, m, e, dst);
}

}  // namespace anchorage::cache

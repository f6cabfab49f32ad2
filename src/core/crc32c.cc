#include "core/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace anchorage::core {

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  // ISA-L takes and returns the register before the final inversion, and an int length.
  unsigned int reg = ~crc;
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  constexpr size_t kMaxStep = size_t{1} << 30;
  while (n > 0) {
    size_t step = std::min(n, kMaxStep);
    reg = crc32_iscsi(p, static_cast<int>(step), reg);
    p += step;
    n -= step;
  }
  return ~reg;
}

}  // namespace anchorage::core

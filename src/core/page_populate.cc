#include "core/page_populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace anchorage::core {

bool populate_for_write(void* p, size_t bytes) {
  if (p == nullptr || bytes < kPopulateFromBytes) return false;
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
}

}  // namespace anchorage::core

#include "engine/chunk_grid.h"

#include <algorithm>

#include "core/check.h"

namespace anchorage::engine {

namespace {
int64_t next_multiple_after(int64_t pos, int64_t step) {
  return (pos / step + 1) * step;
}
}  // namespace

int64_t ChunkGrid::next_end(int64_t pos, int64_t end) const {
  ANCHORAGE_CHECK(0 <= pos && pos < end);
  ANCHORAGE_CHECK(chunk_tokens >= 1 && anchor_spacing >= 1 && granularity >= 1);
  int64_t e = std::min(end, pos + chunk_tokens);
  e = std::min(e, next_multiple_after(pos, anchor_spacing));
  if (pos % granularity != 0) e = std::min(e, next_multiple_after(pos, granularity));
  return e;
}

}  // namespace anchorage::engine

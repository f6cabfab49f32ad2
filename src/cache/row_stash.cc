#include "cache/row_stash.h"

namespace anchorage::cache {

void RowStash::stash(engine::Engine& engine, int64_t begin, int64_t end) {
  rows_ = RowCopy::capture(engine, begin, end);
}

core::Status RowStash::put_back(engine::Engine& engine) {
  core::Status s = rows_.write_back(engine);
  clear();
  return s;
}

int64_t RowStash::shed(int64_t want) {
  if (want <= 0 || !held()) return 0;
  const int64_t freed = rows_.bytes();
  clear();
  return freed;
}

}  // namespace anchorage::cache

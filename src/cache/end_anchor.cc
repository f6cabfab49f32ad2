#include "cache/end_anchor.h"

#include <utility>

namespace anchorage::cache {

void EndAnchor::keep(SectionCopy state) {
  state_ = std::move(state);
}

SectionCopy EndAnchor::release() {
  SectionCopy out = std::move(state_);
  state_ = SectionCopy();
  return out;
}

void EndAnchor::clear() {
  release();
}

int64_t EndAnchor::shed(int64_t want) {
  if (want <= 0 || !held()) return 0;
  const int64_t freed = state_.bytes();
  clear();
  return freed;
}

}  // namespace anchorage::cache

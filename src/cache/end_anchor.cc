#include "cache/end_anchor.h"

#include <utility>

namespace anchorage::cache {

void EndAnchor::keep(SectionCopy state, std::vector<HiddenSpan> hidden) {
  state_ = std::move(state);
  hidden_ = std::move(hidden);
}

SectionCopy EndAnchor::release() {
  SectionCopy out = std::move(state_);
  state_ = SectionCopy();
  hidden_.clear();
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

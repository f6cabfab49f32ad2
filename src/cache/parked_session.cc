#include "cache/parked_session.h"

#include <utility>

namespace anchorage::cache {

int64_t ParkedSession::Contents::bytes() const {
  int64_t n = end.bytes();
  for (const RowCopy& b : blocks) n += b.bytes();
  for (const auto& [pos, a] : anchors) n += a.bytes();
  return n;
}

void ParkedSession::park(Contents contents) {
  c_ = std::move(contents);
  held_ = true;
  bytes_ = c_.bytes();
}

ParkedSession::Contents ParkedSession::release() {
  Contents out = std::move(c_);
  c_ = Contents();
  held_ = false;
  bytes_ = 0;
  return out;
}

int64_t ParkedSession::anchor_at_or_below(int64_t pos) const {
  auto it = c_.anchors.upper_bound(pos);
  if (it == c_.anchors.begin()) return -1;
  return std::prev(it)->first;
}

int64_t ParkedSession::shed(int64_t want) {
  if (want <= 0 || !held_) return 0;
  const int64_t freed = bytes_;
  clear();
  return freed;
}

}  // namespace anchorage::cache

#include "cache/parked_session.h"

#include <algorithm>
#include <utility>

namespace anchorage::cache {

int64_t ParkedSession::Contents::bytes() const {
  int64_t n = end.bytes();
  for (const RowCopy& b : blocks) n += b.bytes();
  for (const auto& [pos, a] : anchors) n += a.bytes();
  return n;
}

const SectionCopy* ParkedSession::Contents::top() const {
  const int64_t e = rows_end();
  if (!end.empty() && end.position() == e) return &end;
  auto it = anchors.find(e);
  return it == anchors.end() ? nullptr : &it->second;
}

core::Result<RowCopy> ParkedSession::Contents::rows(engine::Engine& engine, int64_t b,
                                                    int64_t e) const {
  if (b < 0 || b > e || e > rows_end() || e > engine.capacity())
    return core::Status::invalid_argument("park: rows outside the parked conversation");
  if (e <= begin) return RowCopy::capture(engine, b, e);
  RowCopy out = RowCopy::allocate(engine.layout(), b, e);
  if (b < begin) {
    const RowCopy head = RowCopy::capture(engine, b, begin);
    if (core::Status s = out.copy_rows(engine.layout(), head, b, begin); !s.is_ok()) return s;
  }
  for (const RowCopy& blk : blocks) {
    const int64_t lo = std::max(b, blk.begin()), hi = std::min(e, blk.end());
    if (lo >= hi) continue;
    if (core::Status s = out.copy_rows(engine.layout(), blk, lo, hi); !s.is_ok()) return s;
  }
  return out;
}

void ParkedSession::park(Contents contents) {
  if (held_) give_up();
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

void ParkedSession::give_up() {
  if (held_ && give_up_hook_) give_up_hook_(c_);
  clear();
}

int64_t ParkedSession::anchor_at_or_below(int64_t pos) const {
  auto it = c_.anchors.upper_bound(pos);
  if (it == c_.anchors.begin()) return -1;
  return std::prev(it)->first;
}

int64_t ParkedSession::shed(int64_t want) {
  if (want <= 0 || !held_) return 0;
  const int64_t freed = bytes_;
  give_up();
  return freed;
}

}  // namespace anchorage::cache

#include "cache/pinned_head.h"

#include <utility>

#include "core/check.h"

namespace anchorage::cache {

void PinnedHead::pin(std::vector<int32_t> tokens, RowCopy rows,
                     std::map<int64_t, SectionCopy> anchors, int64_t taint) {
  ANCHORAGE_CHECK(rows.begin() == 0 && rows.end() == int64_t(tokens.size()));
  tokens_ = std::move(tokens);
  rows_ = std::move(rows);
  anchors_ = std::move(anchors);
  taint_ = taint;
  bytes_ = rows_.bytes();
  for (const auto& [pos, a] : anchors_) {
    ANCHORAGE_CHECK(pos <= rows_.end());
    bytes_ += a.bytes();
  }
}

int64_t PinnedHead::anchor_at_or_below(int64_t pos) const {
  auto it = anchors_.upper_bound(pos);
  if (it == anchors_.begin()) return -1;
  return std::prev(it)->first;
}

core::Status PinnedHead::restore(engine::Engine& engine, int64_t a) const {
  auto it = anchors_.find(a);
  if (it == anchors_.end()) return core::Status::invalid_argument("pinned head: no such anchor");
  if (core::Status s = rows_.write_back(engine, 0, a); !s.is_ok()) return s;
  if (core::Status s = it->second.write_back(engine); !s.is_ok()) return s;
  return engine.resume_at(a);
}

int64_t PinnedHead::restore_bytes(int64_t a) const {
  auto it = anchors_.find(a);
  if (it == anchors_.end() || tokens_.empty()) return 0;
  return it->second.bytes() + rows_.bytes() / rows_.end() * a;
}

void PinnedHead::clear() {
  tokens_.clear();
  rows_ = RowCopy();
  anchors_.clear();
  taint_ = INT64_MAX;
  bytes_ = 0;
}

int64_t PinnedHead::shed(int64_t want) {
  if (want <= 0 || !held()) return 0;
  const int64_t freed = bytes_;
  clear();
  return freed;
}

}  // namespace anchorage::cache

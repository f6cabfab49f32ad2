// AnchorSet: the resident prefix's body anchors — copies of the engine's sections at anchor
// lines of a prefill and at the end of every prefill, by position (docs/cache.md "Resident
// prefix"). A byte budget holds them; over it the oldest-taken anchor goes first, except the
// newest `keep_newest`, which the budget never evicts (the next turn resumes near the end),
// and the head anchors (multiples of head_stride up to head_stride * head_count), which go
// only when nothing else is left, so that a pinned head can still take anchors spread over
// it. The memory Budget may still shed every anchor (a shed anchor only costs a re-read).
//
// Thread safety: none; the engine thread only, like every tier.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "cache/state_copy.h"

namespace anchorage::cache {

class AnchorSet final : public CacheLevel {
 public:
  // head_stride 0: no head anchors are preferred.
  AnchorSet(int64_t budget_bytes, int keep_newest, int64_t head_stride = 0, int head_count = 0)
      : budget_bytes_(budget_bytes),
        keep_newest_(keep_newest),
        head_stride_(head_stride),
        head_count_(head_count) {}

  // Keeps `state` as the anchor at state.position() (replacing one there), then evicts the
  // oldest unprotected anchors while over the budget.
  void put(SectionCopy state);
  // The anchor with the largest position <= pos (nullptr: none).
  const SectionCopy* largest_at_or_below(int64_t pos) const;
  const SectionCopy* at(int64_t pos) const;
  // Removes and returns the anchor at pos (empty copy: none there).
  SectionCopy take(int64_t pos);
  // Drops every anchor above pos (its rows are about to be overwritten).
  void drop_above(int64_t pos);
  void clear();

  size_t size() const { return anchors_.size(); }
  std::vector<int64_t> positions() const;  // ascending
  int64_t evicted() const { return evicted_; }

  std::string_view level_name() const override { return "body_anchors"; }
  int64_t held_bytes() const override { return bytes_; }
  int64_t shed(int64_t want) override;

 private:
  struct Entry {
    SectionCopy state;
    uint64_t seq = 0;  // order taken: the oldest is evicted first
  };
  // The position of the anchor to evict first: the oldest that is not among the newest
  // `protect`, a head anchor only when no other is left (-1: none left).
  int64_t oldest(int protect) const;
  bool is_head(int64_t pos) const;
  void erase(std::map<int64_t, Entry>::iterator it);

  int64_t budget_bytes_;
  int keep_newest_;
  int64_t head_stride_;
  int head_count_;
  std::map<int64_t, Entry> anchors_;
  uint64_t next_seq_ = 0;
  int64_t bytes_ = 0;
  int64_t evicted_ = 0;
};

}  // namespace anchorage::cache

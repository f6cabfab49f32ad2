// ParkedSession: one conversation moved aside when a request of another session replaced it
// (A, then B, then A): its tokens, the view rows it lost — from where the two part up to its
// newest anchor (or its end) that fits — in blocks, its newest anchors, its end anchor with the
// hidden spans when the rows up to it fit, and the rows' taint line (docs/cache.md "Resident
// prefix"). Swapping back exchanges the parked rows and the rows in place a block at a time
// (ResidentPrefix does it), so the memory peak is one block.
//
// Thread safety: none; the engine thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "cache/hidden_span.h"
#include "cache/state_copy.h"

namespace anchorage::cache {

class ParkedSession final : public CacheLevel {
 public:
  struct Contents {
    std::vector<int32_t> tokens;  // the conversation's tokens (rows_end or its end anchor)
    std::string session;          // its key (may be empty)
    int64_t begin = 0;            // the first parked row; rows [0, begin) are the shared head
    int64_t block_rows = 0;       // rows per block; block k holds [begin + k*b, ...)
    std::vector<RowCopy> blocks;  // consecutive, from begin to rows_end()
    std::map<int64_t, SectionCopy> anchors;
    SectionCopy end;  // the end anchor (empty: not parked)
    std::vector<HiddenSpan> hidden;
    int64_t taint = INT64_MAX;  // lowest row not exact

    int64_t rows_end() const { return blocks.empty() ? begin : blocks.back().end(); }
    int64_t bytes() const;
  };

  ParkedSession() = default;

  void park(Contents contents);
  bool held() const { return held_; }
  const Contents& contents() const { return c_; }
  // Hands everything over (the swap) and holds nothing.
  Contents release();
  void clear() { release(); }
  // The largest parked anchor at or below pos (-1: none).
  int64_t anchor_at_or_below(int64_t pos) const;

  std::string_view level_name() const override { return "park"; }
  int64_t held_bytes() const override { return bytes_; }
  int64_t shed(int64_t want) override;

 private:
  Contents c_;
  bool held_ = false;
  int64_t bytes_ = 0;
};

}  // namespace anchorage::cache

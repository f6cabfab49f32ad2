// PinnedHead: the head of a conversation copied aside before a request that shares nothing
// with it (a client's compaction) replaces the rows in place: its tokens, the view rows
// [0, h) and up to a few anchors spread over them, with the rows' taint line (docs/cache.md
// "Resident prefix"). A later request that shares more with the head than with the rows in
// place gets the rows and the largest pinned anchor it shares written back.
//
// Thread safety: none; the engine thread only.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "cache/state_copy.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

class PinnedHead final : public CacheLevel {
 public:
  PinnedHead() = default;

  // Holds rows [0, rows.end()) of `tokens` (tokens.size() == rows.end()) and the anchors
  // (each at a position <= rows.end()). `taint` is the lowest row not exact (INT64_MAX: none).
  void pin(std::vector<int32_t> tokens, RowCopy rows, std::map<int64_t, SectionCopy> anchors,
           int64_t taint);
  bool held() const { return !anchors_.empty(); }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  int64_t taint() const { return taint_; }
  // The largest pinned anchor at or below pos (-1: none).
  int64_t anchor_at_or_below(int64_t pos) const;
  // Writes rows [0, a) and the anchor at a back and puts the engine at a.
  core::Status restore(engine::Engine& engine, int64_t a) const;
  int64_t restore_bytes(int64_t a) const;
  void clear();

  std::string_view level_name() const override { return "pin"; }
  int64_t held_bytes() const override { return bytes_; }
  int64_t shed(int64_t want) override;

 private:
  std::vector<int32_t> tokens_;
  RowCopy rows_;
  std::map<int64_t, SectionCopy> anchors_;
  int64_t taint_ = INT64_MAX;
  int64_t bytes_ = 0;
};

}  // namespace anchorage::cache

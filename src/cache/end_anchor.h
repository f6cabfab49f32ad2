// EndAnchor: the sections at the last position a generation forwarded (the prompt plus every
// generated token but the last sampled one) (docs/cache.md "Resident prefix"). The rows up to
// it are the ones in place; the next request that starts with every one of those tokens
// resumes here and forwards only what is new. It goes when its rows do. What those tokens carry
// (hidden spans, generated regions) is the conversation's, not the anchor's
// (ConversationMarks): it outlives the anchor turning into a body anchor.
//
// Thread safety: none; the engine thread only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "cache/state_copy.h"

namespace anchorage::cache {

class EndAnchor final : public CacheLevel {
 public:
  EndAnchor() = default;

  void keep(SectionCopy state);
  bool held() const { return !state_.empty(); }
  // The position (tokens forwarded); -1 when none is held.
  int64_t position() const { return held() ? state_.position() : -1; }
  const SectionCopy& state() const { return state_; }
  // Hands the sections over (the end becomes a body anchor or moves to the park).
  SectionCopy release();
  void clear();

  std::string_view level_name() const override { return "end_anchor"; }
  int64_t held_bytes() const override { return state_.bytes(); }
  int64_t shed(int64_t want) override;

 private:
  SectionCopy state_;
};

}  // namespace anchorage::cache

// CacheLevel: one holder of cache memory that the Budget can ask to give bytes back
// (docs/architecture.md §5, the seed's "Memory"). Tiers register their levels with the Budget in
// shedding order, cheapest first: state store, body anchors, end anchor, guest stash, parked
// session, pinned head. What a level gives back is only a cache: the request it serves then
// starts from the next tier or cold, never with a wrong state.
//
// Thread safety: called on the engine thread only, like the tiers themselves.
#pragma once

#include <cstdint>
#include <string_view>

namespace anchorage::cache {

class CacheLevel {
 public:
  virtual ~CacheLevel() = default;
  // A stable name for logs, /v1/cache/stats and metrics ("store", "body_anchors", ...).
  virtual std::string_view level_name() const = 0;
  // Bytes this level holds now.
  virtual int64_t held_bytes() const = 0;
  // Frees at least `want` bytes if it can (least valuable first); returns the bytes freed
  // (may be less than asked, 0 when empty).
  virtual int64_t shed(int64_t want) = 0;
};

}  // namespace anchorage::cache

// ParkedSession: one conversation moved aside when a request of another session replaced it
// (A, then B, then A): its tokens, the view rows it lost — from where the two part up to its
// newest anchor (or its end) that fits — in blocks, its newest anchors, its end anchor when the
// rows up to it fit, its marks (hidden spans, generated regions) and the rows' taint line
// (docs/cache.md "Resident prefix"). Swapping back exchanges the parked rows and the rows in place
// a block at a time (ResidentPrefix does it), so the memory peak is one block.
//
// Giving a conversation up (a new park over it, a request that rewrites its head, the Budget
// shedding it) first hands it to the give-up hook (the session spill saves it there, while
// the head rows are still in place); clear() and release() do not.
//
// Thread safety: none; the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_level.h"
#include "cache/conversation_marks.h"
#include "cache/state_copy.h"
#include "engine/engine.h"

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
    SectionCopy end;            // the end anchor (empty: not parked)
    ConversationMarks marks;    // of tokens
    int64_t taint = INT64_MAX;  // lowest row not exact

    int64_t rows_end() const { return blocks.empty() ? begin : blocks.back().end(); }
    int64_t bytes() const;
    // The state at rows_end(): the end anchor, else the parked anchor there (null: none).
    const SectionCopy* top() const;
    // Rows [b, e) of the conversation, e <= rows_end(): the head [0, begin) from the engine
    // (the caller has checked the rows in place are its head), the rest from the blocks.
    core::Result<RowCopy> rows(engine::Engine& engine, int64_t b, int64_t e) const;
  };
  using GiveUpHook = std::function<void(const Contents&)>;

  ParkedSession() = default;

  // Over a held conversation: that one is given up (the hook sees it first).
  void park(Contents contents);
  void set_give_up_hook(GiveUpHook hook) { give_up_hook_ = std::move(hook); }
  // Hands the conversation to the give-up hook, then holds nothing.
  void give_up();
  bool held() const { return held_; }
  const Contents& contents() const { return c_; }
  // Hands everything over (the swap) and holds nothing.
  Contents release();
  void clear() { release(); }
  // The largest parked anchor at or below pos (-1: none).
  int64_t anchor_at_or_below(int64_t pos) const;

  std::string_view level_name() const override { return "park"; }
  int64_t held_bytes() const override { return bytes_; }
  int64_t shed(int64_t want) override;  // gives the conversation up

 private:
  GiveUpHook give_up_hook_;
  Contents c_;
  bool held_ = false;
  int64_t bytes_ = 0;
};

}  // namespace anchorage::cache

// Budget: the memory limits every cache lives under (the seed's "Memory", docs/architecture.md §5).
//
// The engine's fixed bytes (weights and state buffers, passed by the caller) plus every
// registered CacheLevel's held bytes are counted against two limits:
//   - ceiling_bytes: the engine between requests. A cache grows only while
//     engine + held + extra <= ceiling - slack (may_grow); a more valuable level may first
//     shed the levels registered before it (shed_cheaper_than).
//   - peak_bytes: the engine during a prefill. Before a prefill, levels are shed cheapest
//     first until engine + held + the prefill's workspace <= peak; a prefill that still does
//     not fit is refused with ResourceExhausted (the server's 503 with Retry-After).
// Levels are registered in shedding order, cheapest first: state store, body anchors, end
// anchor, guest stash, parked session, pinned head. A shed level only makes a later request
// start from another tier or cold, never changes an answer.
//
// Thread safety: none; the engine thread owns the Budget and every level it counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_level.h"
#include "cache/stat_field.h"
#include "core/status.h"
#include "engine/state_cost.h"

namespace anchorage::cache {

struct BudgetOptions {
  // The seed's figures for its 128 GB board (70 / 77 / 2 GiB); the server derives its own
  // from the machine (for_memory) unless --mem-ceiling-gib, --mem-peak-gib or
  // --reserve-slack-gib name them.
  int64_t ceiling_bytes = int64_t(70) << 30;
  int64_t peak_bytes = int64_t(77) << 30;
  int64_t slack_bytes = int64_t(2) << 30;

  // The limits for `total_bytes` of RAM, as the seed's board takes them of its 128 GiB:
  // ceiling 70/128 (0.547), peak 77/128 (0.602), slack 2/128 (1/64). The rest is the
  // operating system's, other processes' and the page cache's (the model file is mapped).
  // total_bytes <= 0 (unknown): the seed's figures above.
  static BudgetOptions for_memory(int64_t total_bytes);
};

struct BudgetLevelStats {
  std::string name;
  int64_t held_bytes = 0;
  int64_t shed_bytes = 0;  // total given back at the Budget's request
};

struct BudgetStats {
  int64_t engine_bytes = 0;
  int64_t held_bytes = 0;  // every level
  int64_t ceiling_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t slack_bytes = 0;
  int64_t prefills_checked = 0;
  int64_t prefills_shed = 0;  // prefills (and reads) before which some level was shed
  int64_t reads_checked = 0;  // make_room_for_read (a prewarm's blocks)
  int64_t refusals = 0;       // prefills and reads refused (ResourceExhausted)
  int64_t shed_bytes = 0;     // every level
  // Released state copies and spare sets waiting for the next capture (section_pool.h): the
  // server counts them as its cheapest level, "spare_states" (SparePoolLevel).
  int64_t pooled_bytes = 0;
  std::vector<BudgetLevelStats> levels;  // in shedding order

  // Every field once, for JSON, /metrics and /health (stat_field.h).
  template <class F>
  void visit(F&& f) const {
    f("engine_bytes", engine_bytes, StatKind::kGauge);
    f("held_bytes", held_bytes, StatKind::kGauge);
    f("ceiling_bytes", ceiling_bytes, StatKind::kGauge);
    f("peak_bytes", peak_bytes, StatKind::kGauge);
    f("slack_bytes", slack_bytes, StatKind::kGauge);
    f("prefills_checked", prefills_checked, StatKind::kCounter);
    f("prefills_shed", prefills_shed, StatKind::kCounter);
    f("reads_checked", reads_checked, StatKind::kCounter);
    f("refusals", refusals, StatKind::kCounter);
    f("shed_bytes", shed_bytes, StatKind::kCounter);
    f("pooled_bytes", pooled_bytes, StatKind::kGauge);
  }
};

class Budget {
 public:
  Budget(const BudgetOptions& options, int64_t engine_bytes);
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // Registers a level after those already registered (so it is shed later). The level must
  // outlive the Budget or be removed first.
  void add_level(CacheLevel* level);
  void remove_level(CacheLevel* level);
  // The engine's own bytes changed (e.g. its workspace buffer grew).
  void set_engine_bytes(int64_t bytes) { engine_bytes_ = bytes; }

  const BudgetOptions& options() const { return options_; }
  int64_t engine_bytes() const { return engine_bytes_; }
  int64_t held_bytes() const;

  // Whether a cache may add `extra` bytes now: engine + held + extra <= ceiling - slack.
  bool may_grow(int64_t extra) const;
  // How many bytes would have to go for may_grow(extra) to hold (<= 0: none).
  int64_t growth_deficit(int64_t extra) const;
  // Bytes held by the levels registered before `level` (all levels if it is not registered).
  int64_t held_cheaper_than(const CacheLevel& level) const;
  // Sheds the levels registered before `level`, cheapest first, until `want` bytes went or
  // they are empty; returns the bytes freed. How a more valuable cache takes the room of
  // cheaper ones.
  int64_t shed_cheaper_than(const CacheLevel& level, int64_t want);

  // Before a prefill that needs `workspace_bytes` of scratch beyond engine_bytes (the engine
  // keeps the largest workspace it grew; count only what the prefill adds): sheds levels
  // cheapest first until engine + held + workspace <= peak. ResourceExhausted when it still
  // does not fit (every level then is already shed as far as it goes).
  core::Status make_room_for_prefill(int64_t workspace_bytes);

  // The scratch a prefill forwarding n_tokens needs (StateCost): floor + per_token * (n - 1),
  // never more than the cap (prefills are cut into chunks); the floor for n <= 1.
  // Before a read that holds `bytes` in RAM beyond the engine until it is done (a prewarm's
  // blocks, checked before any is written): as make_room_for_prefill, but refused at once,
  // nothing shed, when it would not fit with every level shed.
  core::Status make_room_for_read(int64_t bytes);
  // Whether make_room_for_read(bytes) could succeed (with every level shed): no side effects,
  // for a caller that would otherwise do work first (a prewarm saves what it displaces).
  bool read_fits(int64_t bytes) const;

  static int64_t prefill_workspace_bytes(const engine::StateCost& cost, int64_t n_tokens);

  BudgetStats stats() const;

 private:
  struct Level {
    CacheLevel* level = nullptr;
    int64_t shed_bytes = 0;
  };
  // Sheds levels [0, end) cheapest first until `want` bytes went; returns the bytes freed.
  int64_t shed_first(size_t end, int64_t want);
  core::Status make_room(int64_t bytes, const char* what);

  BudgetOptions options_;
  int64_t engine_bytes_ = 0;
  std::vector<Level> levels_;
  int64_t prefills_checked_ = 0;
  int64_t prefills_shed_ = 0;
  int64_t reads_checked_ = 0;
  int64_t refusals_ = 0;
};

}  // namespace anchorage::cache

// CacheStats: every tier's counters and bytes in one value (GET /v1/cache/stats, /health,
// /metrics). Each tier's stats struct names its fields once, in its visit() (cache/stat_field.h);
// the JSON and the Prometheus text are both written from those visits, so a field added to a
// tier appears everywhere with no other edit.
//
// Thread safety: a plain value. EngineCaches publishes a copy under its mutex after every change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cache/budget.h"
#include "cache/disk_tier.h"
#include "cache/resident_prefix.h"
#include "cache/response_cache.h"
#include "cache/session_spill.h"
#include "cache/stat_field.h"
#include "cache/state_store.h"
#include "server/served_prompt.h"

namespace anchorage::server {

// The limits in force (the serve flags), so an operator can read what a number is out of.
struct CacheSettings {
  ResumePolicy resume_policy = ResumePolicy::kExact;
  int64_t anchor_spacing = 0;
  int64_t anchor_budget_bytes = 0;
  bool end_anchor = true;
  bool end_align = true;
  int64_t guest_max_tokens = 0;
  int64_t stash_budget_bytes = 0;
  int64_t pin_budget_bytes = 0;
  int64_t park_budget_bytes = 0;
  int64_t prefix_chunk = 0;
};

// What the request path itself counts (EngineCaches' steps).
struct ServedStats {
  int64_t aligned_text = 0;       // served the rows' tokens by text alignment (rows policy)
  int64_t aligned_replay = 0;     // served with hidden spans put back (rows policy)
  int64_t rows_served = 0;        // requests whose served tokens differ from the client's
  int64_t differing_tokens = 0;   // the served tokens of those that differ from the client's
  int64_t memory_refusals = 0;    // prefills refused with 503
  int64_t snapshots_skipped = 0;  // session snapshots not copied: the next turn went on in place
  int64_t snapshots_lost = 0;     // deferred snapshots the engine no longer held to copy
  int64_t continuations = 0;      // compactions served as the conversation's continuation
  // Recognised compactions served as sent: no conversation of the session in place, or the
  // guard did not find the client's history in it.
  int64_t continuations_declined = 0;
  // --compaction-prepare (summary_ahead.h): runs begun, written to their end, stopped by a
  // request, refused by the engine; compactions answered from a written summary.
  int64_t summaries_started = 0;
  int64_t summaries_prepared = 0;
  int64_t summaries_stopped = 0;
  int64_t summaries_failed = 0;
  int64_t summaries_served = 0;
  int64_t summary_end = 0;  // the end anchor whose summary is written (0: none)

  template <class F>
  void visit(F&& f) const {
    f("aligned_text", aligned_text, cache::StatKind::kCounter);
    f("aligned_replay", aligned_replay, cache::StatKind::kCounter);
    f("rows_served", rows_served, cache::StatKind::kCounter);
    f("differing_tokens", differing_tokens, cache::StatKind::kCounter);
    f("memory_refusals", memory_refusals, cache::StatKind::kCounter);
    f("snapshots_skipped", snapshots_skipped, cache::StatKind::kCounter);
    f("snapshots_lost", snapshots_lost, cache::StatKind::kCounter);
    f("continuations", continuations, cache::StatKind::kCounter);
    f("continuations_declined", continuations_declined, cache::StatKind::kCounter);
    f("summaries_started", summaries_started, cache::StatKind::kCounter);
    f("summaries_prepared", summaries_prepared, cache::StatKind::kCounter);
    f("summaries_stopped", summaries_stopped, cache::StatKind::kCounter);
    f("summaries_failed", summaries_failed, cache::StatKind::kCounter);
    f("summaries_served", summaries_served, cache::StatKind::kCounter);
    f("summary_end", summary_end, cache::StatKind::kGauge);
  }
};

struct CacheStats {
  CacheSettings settings;
  ServedStats served;
  cache::ResidentStats resident;
  bool store_enabled = true;
  cache::StateStoreStats store;
  bool response_enabled = false;
  cache::ResponseCacheStats response;
  cache::BudgetStats memory;
  double planner_tokens_per_s = 0.0;
  int64_t planner_measured_prefills = 0;
  bool disk_enabled = false;
  bool spill_enabled = false;
  cache::SessionSpillStats spill;
  cache::DiskTierStats disk;
  bool write_guard_enabled = false;
  cache::WriteGuardStats write_guard;
};

// GET /v1/cache/stats (docs/cache.md "Stats").
nlohmann::ordered_json to_json(const CacheStats& s);
// The anchorage_cache_<tier>_<field> series of /metrics and the memory budget's per level.
void append_prometheus(const CacheStats& s, std::string* out);

}  // namespace anchorage::server

#include "cache/budget.h"

#include <algorithm>

#include "cache/section_pool.h"
#include "core/check.h"
#include "core/log.h"

namespace anchorage::cache {

BudgetOptions BudgetOptions::for_memory(int64_t total_bytes) {
  BudgetOptions o;
  if (total_bytes <= 0) return o;
  // Integer arithmetic, exact for every total: 70/128 and 77/128 of it, and 1/64.
  o.ceiling_bytes = total_bytes / 128 * 70 + total_bytes % 128 * 70 / 128;
  o.peak_bytes = total_bytes / 128 * 77 + total_bytes % 128 * 77 / 128;
  o.slack_bytes = total_bytes / 64;
  return o;
}

Budget::Budget(const BudgetOptions& options, int64_t engine_bytes)
    : options_(options), engine_bytes_(engine_bytes) {}

void Budget::add_level(CacheLevel* level) {
  ANCHORAGE_CHECK(level != nullptr);
  for (const Level& l : levels_) ANCHORAGE_CHECK(l.level != level);
  levels_.push_back(Level{level, 0});
}

void Budget::remove_level(CacheLevel* level) {
  levels_.erase(std::remove_if(levels_.begin(), levels_.end(),
                               [level](const Level& l) { return l.level == level; }),
                levels_.end());
}

int64_t Budget::held_bytes() const {
  int64_t n = 0;
  for (const Level& l : levels_) n += l.level->held_bytes();
  return n;
}

bool Budget::may_grow(int64_t extra) const {
  return growth_deficit(extra) <= 0;
}

int64_t Budget::growth_deficit(int64_t extra) const {
  return engine_bytes_ + held_bytes() + extra - (options_.ceiling_bytes - options_.slack_bytes);
}

int64_t Budget::held_cheaper_than(const CacheLevel& level) const {
  int64_t n = 0;
  for (const Level& l : levels_) {
    if (l.level == &level) break;
    n += l.level->held_bytes();
  }
  return n;
}

int64_t Budget::shed_first(size_t end, int64_t want) {
  int64_t freed = 0;
  for (size_t i = 0; i < end && freed < want; ++i) {
    const int64_t got = levels_[i].level->shed(want - freed);
    levels_[i].shed_bytes += got;
    freed += got;
  }
  return freed;
}

int64_t Budget::shed_cheaper_than(const CacheLevel& level, int64_t want) {
  if (want <= 0) return 0;
  size_t end = 0;
  while (end < levels_.size() && levels_[end].level != &level) ++end;
  return shed_first(end, want);
}

core::Status Budget::make_room_for_prefill(int64_t workspace_bytes) {
  ++prefills_checked_;
  return make_room(workspace_bytes, "the prefill's workspace");
}

bool Budget::read_fits(int64_t bytes) const {
  return engine_bytes_ + bytes <= options_.peak_bytes;
}

core::Status Budget::make_room_for_read(int64_t bytes) {
  ++reads_checked_;
  if (!read_fits(bytes)) {
    ++refusals_;
    return core::Status::resource_exhausted("memory budget: a read's " + std::to_string(bytes) +
                                            " bytes do not fit under the peak");
  }
  return make_room(bytes, "a read's rows");
}

core::Status Budget::make_room(int64_t bytes, const char* what) {
  const int64_t over = engine_bytes_ + held_bytes() + bytes - options_.peak_bytes;
  if (over <= 0) return core::Status::ok();
  ++prefills_shed_;
  // A level may give back less than asked (its entries are indivisible), so re-measure.
  shed_first(levels_.size(), over);
  const int64_t still = engine_bytes_ + held_bytes() + bytes - options_.peak_bytes;
  if (still <= 0) return core::Status::ok();
  ++refusals_;
  ANCHORAGE_LOG_WARN("budget: %s refused, %lld bytes, over the peak by %lld", what,
                     static_cast<long long>(bytes), static_cast<long long>(still));
  return core::Status::resource_exhausted(std::string("memory budget: ") + what + " (" +
                                          std::to_string(bytes) +
                                          " bytes) does not fit under the peak");
}

int64_t Budget::prefill_workspace_bytes(const engine::StateCost& cost, int64_t n_tokens) {
  if (n_tokens <= 1) return cost.workspace_floor;
  const int64_t linear = cost.workspace_floor + cost.workspace_per_token * (n_tokens - 1);
  return std::min(linear, cost.workspace_cap);
}

BudgetStats Budget::stats() const {
  BudgetStats s;
  s.engine_bytes = engine_bytes_;
  s.ceiling_bytes = options_.ceiling_bytes;
  s.peak_bytes = options_.peak_bytes;
  s.slack_bytes = options_.slack_bytes;
  s.prefills_checked = prefills_checked_;
  s.prefills_shed = prefills_shed_;
  s.reads_checked = reads_checked_;
  s.refusals = refusals_;
  s.pooled_bytes = int64_t(SectionPool::instance().held_bytes());
  for (const Level& l : levels_) {
    const int64_t held = l.level->held_bytes();
    s.held_bytes += held;
    s.shed_bytes += l.shed_bytes;
    s.levels.push_back(BudgetLevelStats{std::string(l.level->level_name()), held, l.shed_bytes});
  }
  return s;
}

}  // namespace anchorage::cache

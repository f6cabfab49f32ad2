#include "server/cache_stats.h"

#include <cinttypes>
#include <cstdio>

namespace anchorage::server {
namespace {

using Json = nlohmann::ordered_json;

template <class Stats>
Json fields_json(const Stats& s) {
  Json j = Json::object();
  s.visit([&](std::string_view name, int64_t v, cache::StatKind) { j[std::string(name)] = v; });
  return j;
}

void line(std::string* out, const std::string& name, const char* type, const std::string& help,
          int64_t v) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  char buf[32];
  std::snprintf(buf, sizeof(buf), " %" PRId64 "\n", v);
  *out += name + buf;
}

// <prefix><tier>_<field>, counters with _total (Prometheus naming).
template <class Stats>
void series(std::string* out, std::string_view tier, const Stats& s,
            std::string_view prefix = "anchorage_cache_") {
  s.visit([&](std::string_view field, int64_t v, cache::StatKind kind) {
    std::string name = std::string(prefix) + std::string(tier) + "_" + std::string(field);
    const bool counter = kind == cache::StatKind::kCounter;
    if (counter) name += "_total";
    line(out, name, counter ? "counter" : "gauge",
         std::string(tier) + " " + std::string(field) + " (docs/cache.md \"Stats\").", v);
  });
}

}  // namespace

Json to_json(const CacheStats& s) {
  Json j;
  j["enabled"] = true;
  const CacheSettings& c = s.settings;
  j["settings"] = {{"resume_policy", std::string(resume_policy_name(c.resume_policy))},
                   {"anchor_spacing", c.anchor_spacing},
                   {"anchor_budget_bytes", c.anchor_budget_bytes},
                   {"end_anchor", c.end_anchor},
                   {"end_align", c.end_align},
                   {"guest_max_tokens", c.guest_max_tokens},
                   {"stash_budget_bytes", c.stash_budget_bytes},
                   {"pin_budget_bytes", c.pin_budget_bytes},
                   {"park_budget_bytes", c.park_budget_bytes},
                   {"prefix_chunk", c.prefix_chunk}};
  j["served"] = fields_json(s.served);
  j["resident"] = fields_json(s.resident);
  Json store = Json{{"enabled", s.store_enabled}};
  store.update(fields_json(s.store));
  j["store"] = std::move(store);
  Json response = Json{{"enabled", s.response_enabled}};
  response.update(fields_json(s.response));
  j["response"] = std::move(response);
  Json memory = fields_json(s.memory);
  Json levels = Json::array();
  for (const cache::BudgetLevelStats& l : s.memory.levels)
    levels.push_back(
        {{"name", l.name}, {"held_bytes", l.held_bytes}, {"shed_bytes", l.shed_bytes}});
  memory["levels"] = std::move(levels);
  j["memory"] = std::move(memory);
  j["planner"] = {{"tokens_per_s", s.planner_tokens_per_s},
                  {"measured_prefills", s.planner_measured_prefills}};
  Json disk = Json{{"enabled", s.disk_enabled}};
  if (s.disk_enabled) disk.update(fields_json(s.disk));
  j["disk"] = std::move(disk);
  Json spill = Json{{"enabled", s.spill_enabled}};
  if (s.spill_enabled) spill.update(fields_json(s.spill));
  j["spill"] = std::move(spill);
  return j;
}

void append_prometheus(const CacheStats& s, std::string* out) {
  series(out, "served", s.served);
  series(out, "resident", s.resident);
  series(out, "store", s.store);
  series(out, "response", s.response);
  series(out, "memory", s.memory);
  if (s.spill_enabled) series(out, "spill", s.spill, "anchorage_");
  if (s.disk_enabled) {
    series(out, "disk", s.disk, "anchorage_");
    // Cache files refused, by tier and by the check that caught them (docs/style.md §3).
    *out +=
        "# HELP anchorage_cache_corrupt_total Cache files refused by a check, by tier and "
        "reason.\n# TYPE anchorage_cache_corrupt_total counter\n";
    char buf[160];
    for (core::Reason r : core::kAllReasons) {
      std::snprintf(buf, sizeof(buf),
                    "anchorage_cache_corrupt_total{tier=\"disk\",reason=\"%s\"} %" PRId64 "\n",
                    core::reason_name(r), s.disk.corrupt_by_reason[size_t(r)]);
      *out += buf;
    }
  }
  // The budget's levels as one labelled family each (a level is a holder, not a field).
  *out +=
      "# HELP anchorage_memory_bytes Bytes the memory budget counts, by holder (engine: weights "
      "and state buffers).\n# TYPE anchorage_memory_bytes gauge\n";
  char buf[160];
  std::snprintf(buf, sizeof(buf), "anchorage_memory_bytes{level=\"engine\"} %" PRId64 "\n",
                s.memory.engine_bytes);
  *out += buf;
  for (const cache::BudgetLevelStats& l : s.memory.levels) {
    std::snprintf(buf, sizeof(buf), "anchorage_memory_bytes{level=\"%s\"} %" PRId64 "\n",
                  l.name.c_str(), l.held_bytes);
    *out += buf;
  }
  *out +=
      "# HELP anchorage_memory_shed_total Bytes the budget took back from a cache level.\n"
      "# TYPE anchorage_memory_shed_total counter\n";
  for (const cache::BudgetLevelStats& l : s.memory.levels) {
    std::snprintf(buf, sizeof(buf), "anchorage_memory_shed_total{level=\"%s\"} %" PRId64 "\n",
                  l.name.c_str(), l.shed_bytes);
    *out += buf;
  }
}

}  // namespace anchorage::server

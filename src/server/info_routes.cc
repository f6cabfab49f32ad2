// GET /v1/models, /v1/models/{id}, /health, /metrics (routes.h).

#include "server/engine_caches.h"
#include "server/metrics.h"
#include "server/openai_json.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"

namespace anchorage::server {

void handle_models(Service& svc, const HttpRequest&, HttpResponse& res) {
  res.set_content(
      dump_json(render_models(svc.options.model_name, svc.created, {svc.capacity, svc.vocab_size})),
      "application/json");
}

void handle_model(Service& svc, const HttpRequest& req, HttpResponse& res) {
  if (req.path_param != svc.options.model_name) {
    ApiError e = field_error("model", "no such model", "model_not_found");
    e.http_status = 404;
    return answer_error(svc, res, e);
  }
  res.set_content(
      dump_json(render_model(svc.options.model_name, svc.created, {svc.capacity, svc.vocab_size})),
      "application/json");
}

namespace {

// The day's disk writes against the write guard's budget (docs/disk-tier.md).
Json health_disk_writes(const cache::WriteGuardStats& w) {
  constexpr double kGB = 1e9;
  Json days = Json::array();
  for (const cache::WriteDay& d : w.last_days)
    days.push_back({{"day", d.day},
                    {"tier_gb", double(d.tier_bytes) / kGB},
                    {"spill_gb", double(d.spill_bytes) / kGB}});
  return Json{{"tier_gb", double(w.today.tier_bytes) / kGB},
              {"spill_gb", double(w.today.spill_bytes) / kGB},
              {"budget_gb", double(w.budget_bytes) / kGB},
              {"level", cache::write_level_name(w.level)},
              {"tier_skips", w.tier_skips},
              {"spill_skips", w.spill_skips},
              {"last_days", std::move(days)}};
}

// The caches in a few figures (GET /v1/cache/stats has them all).
Json health_cache(const CacheStats& s) {
  Json cache = Json{{"enabled", true},
                    {"resident_tokens", s.resident.resident_tokens},
                    {"end_position", s.resident.end_position},
                    {"anchors", s.resident.anchors},
                    {"store_entries", s.store.entries},
                    {"held_bytes", s.memory.held_bytes},
                    {"ceiling_bytes", s.memory.ceiling_bytes}};
  // The disk tier: on, its size, and whether a failed write stopped its writes.
  cache["disk"] = s.disk_enabled ? Json{{"enabled", true},
                                        {"anchors", s.disk.anchors},
                                        {"bytes", s.disk.bytes},
                                        {"writes_stopped", s.disk.write_errors > 0}}
                                 : Json{{"enabled", false}};
  // The session spill: on, its entries and size.
  cache["spill"] = s.spill_enabled ? Json{{"enabled", true},
                                          {"entries", s.spill.entries},
                                          {"bytes", s.spill.bytes},
                                          {"write_errors", s.spill.write_errors}}
                                   : Json{{"enabled", false}};
  if (s.write_guard_enabled) cache["disk_writes"] = health_disk_writes(s.write_guard);
  return cache;
}

// The suffix store's size and rebuilds, and what drafting took from it: token counts only.
Json health_suffix_store(const cache::SuffixStoreStats& st, const DraftCounts& d, bool read_only) {
  return Json{{"enabled", true},
              {"read_only", read_only},
              {"tokens", st.tokens},
              {"indexed_tokens", st.indexed_tokens},
              {"documents", st.documents},
              {"log_bytes", st.log_bytes},
              {"index_bytes", st.index_bytes},
              {"appended_tokens", st.appended_tokens},
              {"deduplicated_tokens", st.deduplicated_tokens},
              {"refused_requests", st.refused_requests},
              {"evictions", st.evictions},
              {"torn_tails", st.torn_tails},
              {"corrupt_deleted", st.corrupt_deleted},
              {"rebuilds", st.rebuilds},
              {"last_rebuild_ms", st.last_rebuild_ms},
              {"rebuild_ms_total", st.total_rebuild_ms},
              {"draft_blocks", d.store_blocks},
              {"drafted_tokens", d.store_drafted_tokens},
              {"accepted_tokens", d.store_accepted_tokens},
              {"error", st.error}};
}

}  // namespace

// 200 while serving; 503 once a shutdown began (load balancers stop sending). /health needs no
// key, so under --cache-scope tenant a caller who cannot see every tenant learns only that the
// caches and the suffix store are on.
void handle_health(Service& svc, const HttpRequest& req, HttpResponse& res) {
  const bool stopping = svc.shutting_down.load();
  const bool sees_all = sees_all_tenants(svc, req);
  Json body = Json::object();
  body["status"] = stopping ? "shutting_down" : "ok";
  body["model"] = svc.options.model_name;
  body["queue_depth"] = svc.queue.depth();
  body["queue_capacity"] = svc.queue.capacity();
  body["engine_busy"] = svc.queue.running();
  if (svc.caches != nullptr && sees_all) {
    body["cache"] = health_cache(svc.caches->stats());
  } else {
    body["cache"] = Json{{"enabled", svc.caches != nullptr}};
  }
  if (svc.suffix_store != nullptr && sees_all) {
    body["suffix_store"] = health_suffix_store(svc.suffix_store->stats(), svc.metrics.drafts(),
                                               svc.options.suffix.read_only);
  } else {
    body["suffix_store"] = Json{{"enabled", svc.suffix_store != nullptr}};
  }
  res.status = stopping ? 503 : 200;
  res.set_content(dump_json(body), "application/json");
}

void handle_metrics(Service& svc, const HttpRequest& req, HttpResponse& res) {
  const QueueGauges gauges{svc.queue.depth(), svc.queue.capacity(), svc.queue.running()};
  std::string text = svc.metrics.render(gauges);
  if (svc.caches != nullptr && sees_all_tenants(svc, req))
    append_prometheus(svc.caches->stats(), &text);
  res.set_content(text, "text/plain; version=0.0.4");
}

}  // namespace anchorage::server

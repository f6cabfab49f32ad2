#include "server/engine_caches.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/log.h"
#include "server/generation_job.h"
#include "text/tokenizer.h"

namespace anchorage::server {
namespace {

using Json = nlohmann::ordered_json;

int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return int64_t(i);
}

// Weights + the sequence's state buffers: what the engine holds whatever the caches do.
int64_t engine_fixed_bytes(const engine::Engine& engine) {
  const engine::StateCost c = engine.cost();
  return engine.architecture().weight_bytes() + c.section_bytes +
         c.bytes_per_token * engine.capacity();
}

std::vector<int32_t> glue_ids(const text::Tokenizer& tok) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.is_added(id)) continue;
    const std::string_view b = tok.token_bytes(id);
    if (!b.empty() && b.find_first_not_of(" \t\n\r") == std::string_view::npos) ids.push_back(id);
  }
  return ids;
}

}  // namespace

std::string session_tag(uint64_t hash, bool has_session) {
  if (!has_session) return {};
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, hash);
  return buf;
}

EngineCaches::EngineCaches(const CacheOptions& options, engine::Engine& engine,
                           const text::Tokenizer& tokenizer)
    : options_(options),
      engine_(engine),
      tokenizer_(tokenizer),
      resident_(options.resident),
      store_(options.store_options),
      responses_(options.response_options),
      budget_(options.budget, engine_fixed_bytes(engine)),
      planner_(options.planner) {
  resident_.set_glue_ids(glue_ids(tokenizer));
  // Shedding order, cheapest first (the seed's "Memory"): responses, the state store, body
  // anchors, the end anchor, the guest stash, the parked session, the pinned head.
  budget_.add_level(&responses_);
  budget_.add_level(&store_);
  for (cache::CacheLevel* level : resident_.levels()) budget_.add_level(level);
  store_.set_budget(&budget_);
  // Preference on equal positions: the rows in place, the pin and the park (one source, the
  // resident prefix), then the store.
  planner_.add_source(&resident_);
  if (options_.store) planner_.add_source(&store_);
  publish_stats();
}

std::vector<int32_t> EngineCaches::served_prompt(const std::vector<int32_t>& prompt,
                                                 const std::string& prompt_text,
                                                 std::string* how) const {
  *how = "none";
  const cache::EndAnchor& end = resident_.end_anchor();
  if (options_.end_align && end.held() && !prompt_text.empty() && !resident_.guest_active()) {
    const std::span<const int32_t> rows = resident_.tokens();
    const int64_t e = end.position();
    if (e > 0 && e <= int64_t(rows.size())) {
      text::EndRecord rec;
      rec.tokens = rows.subspan(0, size_t(e));
      for (const cache::HiddenSpan& h : end.hidden()) rec.hidden.push_back({h.begin, h.end});
      for (const text::GeneratedRegion& g : regions_)
        if (g.end <= e) rec.generated.push_back(g);
      const text::EndAlignment a = text::align_end(tokenizer_, rec, prompt_text);
      if (a.aligned) {
        std::vector<int32_t> served(rec.tokens.begin(), rec.tokens.end());
        tokenizer_.encode(std::string_view(prompt_text).substr(a.prompt_bytes), &served);
        if (int64_t(served.size()) <= engine_.capacity() && int64_t(served.size()) > e) {
          *how = "text";
          return served;
        }
      }
    }
  }
  if (auto replayed = resident_.replay(prompt)) {
    if (int64_t(replayed->size()) <= engine_.capacity()) {
      *how = "replay";
      return std::move(*replayed);
    }
  }
  return prompt;
}

core::Result<CacheStart> EngineCaches::begin(const GenerationJob& job) {
  CacheStart start;
  const std::string session = session_tag(job.session.hash(), !job.session.empty());
  start.served = served_prompt(job.prompt, job.prompt_text, &start.aligned);
  if (start.aligned == "text") ++aligned_text_;
  if (start.aligned == "replay") ++aligned_replay_;

  if (options_.response_cache && !job.response_key.empty()) {
    if (auto hit = responses_.find(start.served, job.response_key)) {
      start.response = std::move(hit);
      start.resume_at = int64_t(start.served.size());
      start.tier = "response";
      start.source = "response";
      publish_stats();
      return start;
    }
  }

  rows_before_.assign(resident_.tokens().begin(), resident_.tokens().end());
  cache::Plan plan = planner_.plan(start.served, session);
  const engine::StateCost cost = engine_.cost();
  const int64_t n_read = int64_t(start.served.size()) - plan.chosen.resume_at;
  core::Status room =
      budget_.make_room_for_prefill(cache::Budget::prefill_workspace_bytes(cost, n_read));
  if (!room.is_ok()) {
    ++memory_refusals_;
    publish_stats();
    return room;
  }
  plan = planner_.plan(start.served, session);  // shedding may have taken the pick

  core::Status begun = resident_.begin(engine_, start.served, session, job.max_tokens, plan.chosen);
  if (!begun.is_ok()) {
    ANCHORAGE_LOG_WARN("cache: resident begin refused its offer (%s); starting cold",
                       begun.message().c_str());
    plan.chosen = cache::ResumeOffer{};
    (void)resident_.begin(engine_, start.served, session, job.max_tokens, plan.chosen);
  }
  if (plan.chosen.useful() && plan.chosen.source == "store") {
    auto restored = store_.take(engine_, plan.chosen);
    if (!restored) {
      ANCHORAGE_LOG_WARN("cache: store restore failed (%s); starting cold",
                         restored.error().message().c_str());
      engine_.reset();
      plan.chosen = cache::ResumeOffer{};
    }
  }
  start.resume_at = plan.chosen.resume_at;
  start.tier = std::string(plan.chosen.tier);
  start.source = std::string(plan.chosen.source);
  start.exact = plan.chosen.exact;
  if (options_.store) {
    const int64_t line = store_.prefix_line(int64_t(start.served.size()), engine_);
    if (line > start.resume_at) start.prefix_line = line;
  }
  return start;
}

engine::PrefillOptions EngineCaches::prefill_hooks(const CacheStart& start) {
  engine::PrefillOptions o;
  o.on_anchor = [this, &start](int64_t position, bool is_end) {
    resident_.on_anchor(engine_, position, is_end);
    if (start.prefix_line > 0 && position == start.prefix_line) {
      const int64_t taint = resident_.taint();
      (void)store_.put_prefix(
          engine_, std::span<const int32_t>(start.served).first(size_t(position)),
          taint == cache::ResidentPrefix::kNoTaint ? cache::StateStore::kUntainted : taint);
    }
  };
  return o;
}

void EngineCaches::end(const GenerationJob& job, const CacheStart& start,
                       const engine::GenerationResult& result,
                       const std::vector<size_t>& hidden_sampled, int64_t prefill_tokens) {
  const std::string session = session_tag(job.session.hash(), !job.session.empty());
  if (prefill_tokens > 0) planner_.note_prefill(prefill_tokens, result.prefill_ns);

  // Every token the engine forwarded: the prompt and the decoded ones (the last sampled token
  // is not decoded, generation.h).
  std::vector<int32_t> forwarded = start.served;
  forwarded.insert(forwarded.end(), result.tokens.begin(),
                   result.tokens.begin() + result.decode_steps);
  const bool guest = resident_.guest_active();
  if (int64_t(forwarded.size()) == engine_.length()) {
    if (options_.store) {
      const int64_t taint = resident_.taint();
      (void)store_.put_session(
          engine_, forwarded,
          taint == cache::ResidentPrefix::kNoTaint ? cache::StateStore::kUntainted : taint,
          session);
    }
    if (!guest) {
      // Hidden spans of the rows: those of the previous end the prompt kept, and this answer's.
      const int64_t kept = common_prefix(rows_before_, start.served);
      std::vector<cache::HiddenSpan> hidden;
      for (const cache::HiddenSpan& h : resident_.end_anchor().hidden())
        if (h.end <= kept) hidden.push_back(h);
      const int64_t base = int64_t(start.served.size());
      for (size_t i : hidden_sampled) {
        const int64_t p = base + int64_t(i);
        if (p >= int64_t(forwarded.size())) continue;
        if (!hidden.empty() && hidden.back().end == p) {
          hidden.back().end = p + 1;
        } else {
          hidden.push_back({p, p + 1});
        }
      }
      std::erase_if(regions_, [&](const text::GeneratedRegion& g) { return g.end > kept; });
      if (forwarded.size() > start.served.size())
        regions_.push_back({base, int64_t(forwarded.size())});
      resident_.keep_end(engine_, forwarded, std::move(hidden));
    }
  }
  (void)resident_.finish_request(engine_);
  publish_stats();
}

void EngineCaches::put_response(const GenerationJob& job, const CacheStart& start,
                                cache::CachedResponse response) {
  if (!options_.response_cache || job.response_key.empty()) return;
  (void)responses_.put(start.served, job.response_key, std::move(response));
  publish_stats();
}

CachePeek EngineCaches::peek(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                             const std::string& session) {
  CachePeek p;
  const std::vector<int32_t> served = served_prompt(prompt, prompt_text, &p.aligned);
  const cache::Plan plan = planner_.plan(served, session);
  p.tier = std::string(plan.chosen.tier);
  p.source = std::string(plan.chosen.source);
  p.tokens = int64_t(served.size());
  p.cached_tokens = plan.cached_tokens;
  p.reread_tokens = plan.reread_tokens;
  p.reread_eta_ms = plan.reread_eta_ms;
  return p;
}

void EngineCaches::abandon() {
  resident_.clear();
  regions_.clear();
  engine_.reset();
  publish_stats();
}

void EngineCaches::clear() {
  (void)resident_.finish_request(engine_);
  resident_.clear();
  store_.clear();
  responses_.clear();
  regions_.clear();
  publish_stats();
}

void EngineCaches::publish_stats() {
  Json j;
  j["enabled"] = true;
  // The limits in force (the serve flags), so an operator can read what a number is out of.
  const cache::ResidentOptions& ro = options_.resident;
  j["settings"] = {{"anchor_spacing", ro.anchor_spacing},
                   {"anchor_budget_bytes", ro.anchor_bytes},
                   {"end_anchor", ro.end_anchor},
                   {"end_align", options_.end_align},
                   {"guest_max_tokens", ro.guest_max_tokens},
                   {"stash_budget_bytes", ro.stash_bytes},
                   {"pin_budget_bytes", ro.pin_bytes},
                   {"park_budget_bytes", ro.park_bytes},
                   {"prefix_chunk", options_.store_options.prefix_chunk}};
  const cache::ResidentStats r = resident_.stats();
  j["resident"] = {{"tokens", r.resident_tokens},
                   {"anchors", r.anchors},
                   {"anchor_bytes", r.anchor_bytes},
                   {"anchors_taken", r.anchors_taken},
                   {"anchors_evicted", r.anchors_evicted},
                   {"end_position", r.end_position},
                   {"end_bytes", r.end_bytes},
                   {"ends_kept", r.ends_kept},
                   {"ends_declined", r.ends_declined},
                   {"taint", r.taint},
                   {"hits_anchor", r.hits_anchor},
                   {"hits_end", r.hits_end},
                   {"pin_hits", r.pin_hits},
                   {"park_hits", r.park_hits},
                   {"other_tier", r.other_tier},
                   {"cold", r.cold},
                   {"guests", r.guests},
                   {"guest_declines", r.guest_declines},
                   {"guest_stash_lost", r.guest_stash_lost},
                   {"stash_bytes", r.stash_bytes},
                   {"pins", r.pins},
                   {"pin_declines", r.pin_declines},
                   {"pin_bytes", r.pin_bytes},
                   {"pin_tokens", r.pin_tokens},
                   {"parks", r.parks},
                   {"park_declines", r.park_declines},
                   {"park_bytes", r.park_bytes},
                   {"park_tokens", r.park_tokens},
                   {"aligned_text", aligned_text_},
                   {"aligned_replay", aligned_replay_}};
  const cache::StateStoreStats s = store_.stats();
  j["store"] = {{"enabled", options_.store},
                {"entries", s.entries},
                {"held_bytes", s.held_bytes},
                {"peak_bytes", s.peak_bytes},
                {"cache_bytes", s.cache_bytes},
                {"entry_bytes", s.entry_bytes},
                {"session_puts", s.session_puts},
                {"prefix_puts", s.prefix_puts},
                {"already_stored", s.already_stored},
                {"declined_big", s.declined_big},
                {"declined_short", s.declined_short},
                {"declined_tainted", s.declined_tainted},
                {"declined_memory", s.declined_memory},
                {"hits", s.hits},
                {"hit_tokens", s.hit_tokens},
                {"evictions", s.evictions},
                {"evicted_bytes", s.evicted_bytes},
                {"hash_collisions", s.hash_collisions}};
  const cache::ResponseCacheStats rc = responses_.stats();
  j["response"] = {{"enabled", options_.response_cache},
                   {"entries", rc.entries},
                   {"held_bytes", rc.held_bytes},
                   {"max_bytes", rc.max_bytes},
                   {"hits", rc.hits},
                   {"misses", rc.misses},
                   {"puts", rc.puts},
                   {"evictions", rc.evictions}};
  const cache::BudgetStats b = budget_.stats();
  Json levels = Json::array();
  for (const cache::BudgetLevelStats& l : b.levels)
    levels.push_back(
        {{"name", l.name}, {"held_bytes", l.held_bytes}, {"shed_bytes", l.shed_bytes}});
  j["memory"] = {{"engine_bytes", b.engine_bytes},   {"held_bytes", b.held_bytes},
                 {"ceiling_bytes", b.ceiling_bytes}, {"peak_bytes", b.peak_bytes},
                 {"slack_bytes", b.slack_bytes},     {"prefills_checked", b.prefills_checked},
                 {"prefills_shed", b.prefills_shed}, {"refusals", b.refusals},
                 {"shed_bytes", b.shed_bytes},       {"levels", levels}};
  j["planner"] = {{"tokens_per_s", planner_.tokens_per_s()},
                  {"measured_prefills", planner_.measured_prefills()}};
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_ = std::move(j);
}

Json EngineCaches::stats_json() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

}  // namespace anchorage::server

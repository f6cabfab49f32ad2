#include "server/engine_caches.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/clock.h"
#include "core/log.h"
#include "core/token_prefix.h"
#include "server/choice_builder.h"
#include "server/generation_job.h"
#include "text/tokenizer.h"

namespace anchorage::server {

using core::common_prefix;
namespace {

// The most tokens an echo anchor re-forwards (after_answer, while the engine is idle; a
// request arriving meanwhile waits for it).
constexpr int64_t kEchoMaxTokens = 512;

// Weights + the sequence's state buffers: what the engine holds whatever the caches do.
int64_t engine_fixed_bytes(const engine::Engine& engine) {
  const engine::StateCost c = engine.cost();
  return engine.architecture().weight_bytes() + c.section_bytes +
         c.bytes_per_token * engine.capacity();
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
      planner_(options.planner),
      summary_ahead_(options.prepare) {
  resident_.set_glue_ids(tokenizer.whitespace_ids());
  resident_.set_park_give_up_hook(
      [this](const cache::ParkedSession::Contents& p) { spill_given_up(p); });
  // Shedding order, cheapest first (the seed's "Memory"): responses, the state store, body
  // anchors, the end anchor, the guest stash, the parked session, the pinned head.
  budget_.add_level(&spare_level_);
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

EngineCaches::~EngineCaches() {
  if (disk_) disk_->flush();
}

void EngineCaches::attach_disk_tier(std::unique_ptr<cache::DiskTier> disk) {
  disk_ = std::move(disk);
  if (disk_) planner_.add_source(disk_.get());
  publish_stats();
}

void EngineCaches::attach_disk_tier(DiskTiers tiers) {
  attach_disk_tier(std::move(tiers.tier));
  spill_ = std::move(tiers.spill);
  if (spill_) {
    planner_.add_source(spill_.get());
    read_back_resident();
  }
  publish_stats();
}

// The conversation the last drain saved comes back before the first request: its rows, its end
// anchor and what the end alignment needs, as if the process had never stopped.
void EngineCaches::read_back_resident() {
  if (spill_->resident_tokens().empty()) return;
  const int64_t t0 = core::now_ns();
  auto r = spill_->restore_resident(engine_);
  if (!r) {
    engine_.reset();
    core::ignore_status(r.error(), "cache: the spill's resident conversation was not read back");
    return;
  }
  resident_.adopt_conversation(
      engine_, r->tokens, r->session, r->taint,
      cache::ConversationMarks{std::move(r->hidden), std::move(r->regions)});
  core::log(core::LogLevel::kInfo,
            "session spill: the resident conversation (%zu tokens) read back in %.0f ms",
            r->tokens.size(), double(core::now_ns() - t0) * 1e-6);
}

core::Status EngineCaches::save_resident(cache::SpillWrite kind, bool resident) {
  const cache::EndAnchor& end = resident_.end_anchor();
  const int64_t e = end.position();
  if (!spill_ || !end.held() || resident_.guest_active() ||
      int64_t(resident_.tokens().size()) < e || engine_.length() < e)
    return core::Status::ok();
  cache::SpillConversation c;
  c.tokens = resident_.tokens().first(size_t(e));
  c.session = std::string(resident_.session());
  c.taint = resident_.taint();
  c.end = &end.state();
  c.anchors = resident_.anchor_copies();
  cache::ConversationMarks marks = resident_.marks().below(e);
  c.hidden = std::move(marks.hidden);
  c.regions = std::move(marks.generated);
  c.resident = resident;
  return spill_->save(engine_, c, kind);
}

// The parked conversation up to its end anchor (or its top anchor when the park kept no end):
// the head's rows from the engine, the rest from the park's blocks.
core::Status EngineCaches::save_parked(const cache::ParkedSession::Contents& p,
                                       cache::SpillWrite kind) {
  const cache::SectionCopy* top = p.top();
  const int64_t e = p.rows_end();
  if (!spill_ || top == nullptr || e <= 0 || int64_t(p.tokens.size()) < e)
    return core::Status::ok();
  cache::SpillConversation c;
  c.tokens = std::span<const int32_t>(p.tokens).first(size_t(e));
  c.session = p.session;
  c.taint = p.taint;
  c.end = top;
  for (const auto& [pos, anchor] : p.anchors)
    if (pos < e) c.anchors.push_back(&anchor);
  cache::ConversationMarks marks = p.marks.below(e);
  c.hidden = std::move(marks.hidden);
  c.regions = std::move(marks.generated);
  c.rows = [&](int64_t b, int64_t x) { return p.rows(engine_, b, x); };
  return spill_->save(engine_, c, kind);
}

// The park gives a conversation up (another one parked over it, its head rewritten, shed): a
// long one goes to the spill while its head is still in place (the seed's "Live
// conversations").
void EngineCaches::spill_given_up(const cache::ParkedSession::Contents& p) {
  if (!spill_ || p.rows_end() < spill_->options().give_up_min_tokens) return;
  core::ignore_status(save_parked(p, cache::SpillWrite::kEviction),
                      "cache: a conversation the park gave up was not spilled");
}

// A request of another session is about to overwrite a long conversation that no RAM tier
// keeps to its end: its rows go to the spill first (the seed's "Live conversations"). A store
// restore clears the rows in place: from the give-up length.
void EngineCaches::spill_displaced(std::span<const int32_t> served, const std::string& session,
                                   const cache::ResumeOffer& chosen) {
  const cache::EndAnchor& end = resident_.end_anchor();
  if (!spill_ || !end.held()) return;
  const cache::SessionSpillOptions& so = spill_->options();
  const int64_t min_tokens = chosen.source == cache::ResumeSource::kStore
                                 ? std::min(so.min_tokens, so.give_up_min_tokens)
                                 : so.min_tokens;
  if (end.position() < min_tokens) return;
  if (!session.empty() && session == resident_.session()) return;
  if (resident_.keeps_conversation(served, session, chosen)) return;
  core::ignore_status(save_resident(cache::SpillWrite::kEviction, false),
                      "cache: a displaced conversation was not spilled");
}

void EngineCaches::drain() {
  if (!spill_) return;
  // The parked conversation first: without session keys it may share the resident one's
  // entry (the same head), and the resident one is the one read back at the next start.
  if (const cache::ParkedSession::Contents* p = resident_.parked();
      p != nullptr && p->rows_end() >= spill_->options().drain_min_tokens) {
    core::ignore_status(save_parked(*p, cache::SpillWrite::kDrain),
                        "cache: the drain's save of the parked conversation failed");
  }
  const cache::EndAnchor& end = resident_.end_anchor();
  if (end.held() && end.position() >= spill_->options().drain_min_tokens) {
    const int64_t t0 = core::now_ns();
    core::Status s = save_resident(cache::SpillWrite::kDrain, true);
    if (s.is_ok())
      core::log(core::LogLevel::kInfo, "session spill: drain saved %lld tokens in %.0f ms",
                (long long)end.position(), double(core::now_ns() - t0) * 1e-6);
    core::ignore_status(s, "cache: the drain's spill save failed");
  }
  publish_stats();
}

// The rows' own tokens up to the end anchor, then the client's text after it re-tokenized,
// when the client's text starts with the rows' text; or up to the last row where it still did
// (docs/end-alignment.md "Partial alignment"). The conversation in place first, then the parked
// one (issue 12 §5: a conversation back from the park gets the same matching), then the
// session's spilled one (issue 11: the spill is matched as RAM is).
std::optional<std::vector<int32_t>> EngineCaches::align_by_text(
    const std::vector<int32_t>& prompt, const std::string& prompt_text, const std::string& session,
    const cache::OfferScope& scope) const {
  if (!options_.end_align || prompt_text.empty() || resident_.guest_active()) return std::nullopt;
  const cache::EndAnchor& end = resident_.end_anchor();
  if (end.held()) {
    if (auto a = align_record(resident_.tokens(), end.position(), resident_.marks(), prompt,
                              prompt_text, scope))
      return a;
  }
  if (const cache::ParkedSession::Contents* p = resident_.parked(); p && !p->end.empty()) {
    if (auto a = align_record(p->tokens, p->end.position(), p->marks, prompt, prompt_text, scope))
      return a;
  }
  return align_spilled(prompt, prompt_text, session, scope);
}

std::optional<std::vector<int32_t>> EngineCaches::align_spilled(
    const std::vector<int32_t>& prompt, const std::string& prompt_text, const std::string& session,
    const cache::OfferScope& scope) const {
  if (!spill_ || session.empty()) return std::nullopt;
  const cache::SessionSpill::SessionRecord rec = spill_->session_record(session);
  const int64_t e = int64_t(rec.tokens.size());
  if (e == 0 || common_prefix(rec.tokens, prompt) >= e) return std::nullopt;
  const cache::ConversationMarks marks{{rec.hidden.begin(), rec.hidden.end()},
                                       {rec.regions.begin(), rec.regions.end()}};
  return align_record(rec.tokens, e, marks, prompt, prompt_text, scope);
}

std::optional<std::vector<int32_t>> EngineCaches::align_record(
    std::span<const int32_t> rows, int64_t e, const cache::ConversationMarks& marks,
    const std::vector<int32_t>& prompt, const std::string& prompt_text,
    const cache::OfferScope& scope) const {
  if (e <= 0 || e > int64_t(rows.size())) return std::nullopt;
  // The rows' tokens are served only to the tenant whose request made them.
  if (!scope.allows(rows, e)) return std::nullopt;
  text::EndRecord rec;
  rec.tokens = rows.subspan(0, size_t(e));
  for (const cache::HiddenSpan& h : marks.hidden)
    if (h.end <= e) rec.hidden.push_back({h.begin, h.end});
  for (auto [b, end] : marks.generated)
    if (end <= e) rec.generated.push_back({b, end});
  const text::EndAlignment a = text::align_end(tokenizer_, rec, prompt_text);
  if (!a.aligned)
    ANCHORAGE_LOG_DEBUG(
        "end alignment: %lld rows (%zu hidden spans, %zu regions) not aligned: "
        "%s; partial %lld rows",
        (long long)e, rec.hidden.size(), rec.generated.size(), a.why.c_str(),
        (long long)a.partial_rows);
  // Aligned: the rows to the end anchor, then the client's rest. Parted part way: the rows to
  // the last boundary where the text still matched (partial alignment), when that goes further
  // than the client's own tokens follow the rows.
  const int64_t rows_served = a.aligned ? e : a.partial_rows;
  const size_t bytes_matched = a.aligned ? a.prompt_bytes : a.partial_prompt_bytes;
  if (!a.aligned && rows_served <= common_prefix(rows.first(size_t(e)), prompt))
    return std::nullopt;
  std::vector<int32_t> served(rec.tokens.begin(), rec.tokens.begin() + rows_served);
  tokenizer_.encode(std::string_view(prompt_text).substr(bytes_matched), &served);
  if (int64_t(served.size()) > engine_.capacity() || int64_t(served.size()) <= rows_served)
    return std::nullopt;
  return served;
}

// How far the session's spilled conversation would serve the prompt through the end
// alignment on its own tokens and regions (note_unused's end_no_align: under the exact policy
// the spill, as every tier, matches the client's tokens only; under the rows policy serve()
// has already aligned the prompt on it). 0 unless its end is a block or more past the start
// and its tokens part from the prompt below it: only then is there something to name.
int64_t EngineCaches::spill_aligned_end(const GenerationJob& job, const std::string& session,
                                        const cache::OfferScope& scope, int64_t start) const {
  const std::span<const int32_t> tokens = spill_->session_tokens(session);
  const int64_t e = int64_t(tokens.size());
  if (e - std::max<int64_t>(start, 0) < spill_->options().block_rows) return 0;
  auto served = align_spilled(job.prompt, job.prompt_text, session, scope);
  return served ? common_prefix(*served, tokens) : 0;
}

cache::OfferScope EngineCaches::scope_of(const SessionKey& session) const {
  return options_.tenant_scope ? cache::OfferScope::tenant(ledger_, session.tenant)
                               : cache::OfferScope::global();
}

void EngineCaches::record_made(const std::string& tenant, std::span<const int32_t> tokens,
                               std::initializer_list<int64_t> lengths) {
  if (options_.tenant_scope) ledger_.record(tenant, tokens, lengths);
}

ServedPrompt EngineCaches::serve(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                                 const std::string& session, const cache::OfferScope& scope) const {
  switch (options_.resume_policy) {
    case ResumePolicy::kExact:
      return ServedPrompt::client(prompt);
    case ResumePolicy::kRows:
      break;
  }
  if (auto aligned = align_by_text(prompt, prompt_text, session, scope))
    return ServedPrompt::made(std::move(*aligned), prompt, Alignment::kText);
  // The replay may serve the parked session's tokens as well as the end anchor's: under a
  // tenant scope it is not tried (the text alignment above is, for the tenant's own rows).
  if (scope.partitioned()) return ServedPrompt::client(prompt);
  if (auto replayed = resident_.replay(prompt);
      replayed && int64_t(replayed->size()) <= engine_.capacity())
    return ServedPrompt::made(std::move(*replayed), prompt, Alignment::kReplay);
  return ServedPrompt::client(prompt);
}

// The session's conversation up to its end anchor wherever a tier holds it whole (docs/
// compaction.md): in place, parked, or in the spill — each of those offers its end anchor to
// the planner for a prompt that continues it. Empty: none.
std::span<const int32_t> EngineCaches::held_conversation(const std::string& session) const {
  if (session.empty()) return {};
  const cache::EndAnchor& end = resident_.end_anchor();
  if (session == resident_.session() && end.held() && !resident_.guest_active() &&
      end.position() <= int64_t(resident_.tokens().size()))
    return resident_.tokens().first(size_t(end.position()));
  if (const cache::ParkedSession::Contents* p = resident_.parked();
      p != nullptr && p->session == session && !p->end.empty() &&
      p->end.position() <= int64_t(p->tokens.size()))
    return std::span<const int32_t>(p->tokens).first(size_t(p->end.position()));
  if (spill_) return spill_->session_tokens(session);
  return {};
}

// A compaction of the session's conversation: its tokens up to the end anchor, then the
// client's instructions as one turn — when the guard finds the client's first and last user
// lines in it (the session key is the tenant's too).
std::optional<std::vector<int32_t>> EngineCaches::continuation(
    const CompactionTurn& turn, const std::string& session, const cache::OfferScope& scope) const {
  const std::span<const int32_t> record = held_conversation(session);
  const int64_t e = int64_t(record.size());
  if (e <= 0 || !scope.allows(record, e)) return std::nullopt;
  if (!record_matches(turn, tokenizer_.decode_bytes(record))) return std::nullopt;
  std::vector<int32_t> served(record.begin(), record.end());
  tokenizer_.encode(turn.turn_text, &served);
  if (int64_t(served.size()) > engine_.capacity()) return std::nullopt;
  return served;
}

// The serve step with its counters: a compaction's continuation when it applies, else the
// resume policy's prompt.
ServedPrompt EngineCaches::serve(const GenerationJob& job, const std::string& session,
                                 const cache::OfferScope& scope) {
  std::optional<ServedPrompt> served;
  summary_ahead_.learn(job);
  if (job.compaction) {
    if (auto continued = continuation(*job.compaction, session, scope))
      served = ServedPrompt::made(std::move(*continued), job.prompt, Alignment::kContinuation);
    ++(served ? served_stats_.continuations : served_stats_.continuations_declined);
  }
  if (!served) served = serve(job.prompt, job.prompt_text, session, scope);
  if (served->aligned == Alignment::kText) ++served_stats_.aligned_text;
  if (served->aligned == Alignment::kReplay) ++served_stats_.aligned_replay;
  if (const int64_t d = served->differing(); d > 0) {
    ++served_stats_.rows_served;
    served_stats_.differing_tokens += d;
  }
  return std::move(*served);
}

bool EngineCaches::answer_from_responses(const GenerationJob& job, const cache::OfferScope& scope,
                                         CacheStart* start) {
  if (!options_.response_cache || job.response_key.empty()) return false;
  const std::span<const int32_t> served = start->served.tokens;
  if (!scope.allows(served, int64_t(served.size()))) return false;
  auto hit = responses_.find(start->served.tokens, job.response_key);
  if (!hit) return false;
  start->response = std::move(hit);
  start->offer = cache::ResumeOffer{};
  start->offer.source = cache::ResumeSource::kResponse;
  start->offer.resume_at = int64_t(start->served.tokens.size());
  return true;
}

// A compaction served as the continuation whose summary was written ahead (summary_ahead.h):
// no engine work, the conversation stays in place as it was.
bool EngineCaches::answer_from_prepared(const GenerationJob& job, const std::string& session,
                                        CacheStart* start) {
  if (start->served.aligned != Alignment::kContinuation) return false;
  auto answer = summary_ahead_.answer(job, start->served.tokens, session);
  if (!answer) return false;
  start->response = std::move(answer);
  start->offer = cache::ResumeOffer{};
  start->offer.source = cache::ResumeSource::kPrepared;
  start->offer.resume_at = int64_t(start->served.tokens.size());
  start->offer.exact = false;
  return true;
}

SummaryAhead::Conversation EngineCaches::conversation_in_place() const {
  SummaryAhead::Conversation c;
  const cache::EndAnchor& end = resident_.end_anchor();
  if (!end.held() || resident_.guest_active() || engine_.length() < end.position() ||
      end.position() > int64_t(resident_.tokens().size()))
    return c;
  c.record = resident_.tokens().first(size_t(end.position()));
  c.session = std::string(resident_.session());
  c.end = &end.state();
  return c;
}

bool EngineCaches::summary_wanted() const {
  return summary_ahead_.options().enabled && summary_ahead_.wanted(conversation_in_place());
}

void EngineCaches::prepare_summary(const std::function<bool()>& should_stop) {
  const SummaryAhead::Conversation c = conversation_in_place();
  if (!summary_ahead_.wanted(c)) return;
  // The disk writer may go on copying the conversation's rows: the run writes above them only.
  if (disk_) disk_->fence(int64_t(c.record.size()));
  const int64_t t0 = core::now_ns();
  core::Status s = summary_ahead_.prepare(engine_, tokenizer_, c, should_stop);
  if (!s.is_ok()) {
    // The engine's state is not the conversation's any more: nothing of it is trusted.
    core::ignore_status(s, "cache: the summary written ahead failed; the rows are dropped");
    abandon();
    return;
  }
  ANCHORAGE_LOG_DEBUG("cache: summary ahead of %zu tokens, %.0f ms", c.record.size(),
                      double(core::now_ns() - t0) * 1e-6);
  publish_stats();
}

core::Result<cache::Plan> EngineCaches::plan_with_room(std::span<const int32_t> served,
                                                       const std::string& session,
                                                       const cache::OfferScope& scope) {
  const cache::Plan first = planner_.plan(served, session, scope);
  const int64_t n_read = int64_t(served.size()) - first.chosen.resume_at;
  core::Status room =
      budget_.make_room_for_prefill(cache::Budget::prefill_workspace_bytes(engine_.cost(), n_read));
  if (!room.is_ok()) {
    ++served_stats_.memory_refusals;
    return room;
  }
  return planner_.plan(served, session, scope);  // shedding may have taken the pick
}

// The resident prefix prepares for every request (guest stash, pin, park) and restores its own
// offers; every other tier restores its offer here, after it. A failed restore starts cold.
cache::ResumeOffer EngineCaches::restore(std::span<const int32_t> served,
                                         const std::string& session, int64_t max_tokens,
                                         cache::ResumeOffer chosen) {
  const int64_t rows_in_place = (!disk_ && !spill_) ? 0 : exact_rows_in_place(served);
  if (disk_) {
    // The disk writer stops copying rows this request may overwrite: every row unless it
    // resumes in place.
    const bool in_place =
        chosen.source == cache::ResumeSource::kAnchor || chosen.source == cache::ResumeSource::kEnd;
    disk_->fence(in_place ? chosen.resume_at : 0);
  }
  spill_displaced(served, session, chosen);
  if (core::Status s = resident_.begin(engine_, served, session, max_tokens, chosen); !s.is_ok()) {
    // The offer is lost, not the answer: the request starts cold (logged and counted).
    core::ignore_status(s, "cache: resident begin refused its offer; starting cold");
    chosen = cache::ResumeOffer{};
    // The cold start writes every row: the disk writer stops copying any (the fence above
    // allowed rows below an in-place offer that is now gone).
    if (disk_) disk_->fence(0);
    core::ignore_status(resident_.begin(engine_, served, session, max_tokens, chosen),
                        "cache: resident cold begin");
  }
  // Every other tier restores its offer after the resident prefix prepared; a failed
  // restore starts cold.
  if (core::Status s = restore_other_tier(served, chosen, rows_in_place); !s.is_ok()) {
    core::ignore_status(s, "cache: restore failed; starting cold");
    engine_.reset();
    chosen = cache::ResumeOffer{};
  }
  return chosen;
}

core::Status EngineCaches::restore_other_tier(std::span<const int32_t> served,
                                              const cache::ResumeOffer& chosen,
                                              int64_t rows_in_place) {
  switch (chosen.source) {
    case cache::ResumeSource::kStore:
      return store_.take(engine_, chosen).status();
    case cache::ResumeSource::kDisk:
      return disk_->restore(engine_, served, chosen, rows_in_place);
    case cache::ResumeSource::kSpill:
      return spill_->restore(engine_, served, chosen, rows_in_place);
    case cache::ResumeSource::kCold:
    case cache::ResumeSource::kAnchor:  // the resident prefix restored these
    case cache::ResumeSource::kEnd:
    case cache::ResumeSource::kPin:
    case cache::ResumeSource::kPark:
    case cache::ResumeSource::kResponse:  // never planned
    case cache::ResumeSource::kContinuation:
    case cache::ResumeSource::kPrepared:  // answered without the engine
      break;
  }
  return core::Status::ok();
}

// The one place that says what a start is: where it resumed, whether that equals a cold
// prefill of the client's own tokens, and the usage figures.
void EngineCaches::start_from(CacheStart* start) const {
  const ServedPrompt& served = start->served;
  CacheSplit& split = start->split;
  const int64_t n = int64_t(served.tokens.size());
  // A continuation resumed from the conversation's end anchor (in place, parked or spilled); it
  // says what it served instead, and `tier` which tier restored it.
  split.restored_by = start->offer.source;
  split.source = served.aligned == Alignment::kContinuation && start->offer.useful() &&
                         start->offer.source != cache::ResumeSource::kPrepared
                     ? cache::ResumeSource::kContinuation
                     : start->offer.source;
  split.aligned = served.aligned;
  split.client_tokens = served.client_tokens;
  split.differing = served.differing();
  split.prompt_tokens = n;
  split.cached = std::min(start->offer.resume_at, n);
  split.reread = n - split.cached;
  split.exact = start->offer.exact && split.differing == 0;
}

core::Result<CacheStart> EngineCaches::begin(const GenerationJob& job) {
  CacheStart start;
  // This request came before the idle moment after the last answer.
  start.split.echo_dropped = echo_.has_value();
  echo_.reset();
  start.tenant = job.session.tenant;
  const cache::OfferScope scope = scope_of(job.session);
  const std::string session = session_tag(job.session.hash(), !job.session.empty());
  start.served = serve(job, session, scope);
  if (!answer_from_prepared(job, session, &start) && !answer_from_responses(job, scope, &start)) {
    settle_prefix();
    settle_snapshot(start.served.tokens, session);
    auto plan = plan_with_room(start.served.tokens, session, scope);
    if (!plan) {
      publish_stats();
      return plan.error();
    }
    if (spill_) {
      cache::ResumeOffer mine;
      for (const cache::ResumeOffer& o : plan->offers)
        if (o.source == cache::ResumeSource::kSpill) mine = o;
      spill_->note_unused(start.served.tokens, mine, plan->chosen,
                          spill_aligned_end(job, session, scope, plan->chosen.resume_at));
    }
    start.offer = restore(start.served.tokens, session, job.max_tokens, plan->chosen);
    // The last user message's start is known in the client's tokens only.
    if (start.served.aligned == Alignment::kNone) resident_.want_head_line(job.head_end);
    // The state resumed from stays the tenant's most recent (the ledger forgets the oldest).
    if (start.offer.useful()) record_made(start.tenant, start.served.tokens, {start.resume_at()});
    if (options_.store) {
      int64_t line = store_.prefix_line(int64_t(start.served.tokens.size()), engine_);
      // A guest's state goes when it ends: its head up to its last user message goes to the
      // store, so the next request with that head (opencode's title request after the next
      // turn) resumes there instead of cold.
      if (resident_.guest_active() && start.served.aligned == Alignment::kNone &&
          job.head_end > line && job.head_end < int64_t(start.served.tokens.size()) &&
          job.head_end <= store_.max_entry_tokens(engine_))
        line = job.head_end;
      if (line > start.resume_at()) start.prefix_line = line;
    }
    if (disk_) plan_disk_writes(job, session, &start);
  }
  start_from(&start);
  const std::string_view source = cache::name(start.split.source);
  ANCHORAGE_LOG_DEBUG("cache: begin %lld tokens, %.*s at %lld (%s), rows held %zu",
                      (long long)start.split.prompt_tokens, int(source.size()), source.data(),
                      (long long)start.split.cached, start.split.exact ? "exact" : "not exact",
                      resident_.tokens().size());
  publish_stats();
  return start;
}

// The disk tier's admission, once the start is known: only a start that is a cold prefill's
// bits of the client's own tokens writes (the tier promises exactly those bits).
void EngineCaches::plan_disk_writes(const GenerationJob& job, const std::string& session,
                                    CacheStart* start) {
  cache::DiskWriteRequest req;
  req.prompt = start->served.tokens;
  req.resume_at = start->resume_at();
  req.exact = start->offer.exact && start->served.differing() == 0;
  req.session = session;
  req.head_end = job.head_end;
  const int64_t taint = resident_.taint();
  req.taint = taint == cache::ResidentPrefix::kNoTaint ? INT64_MAX : taint;
  start->disk_lines = disk_->plan_writes(req);
}

engine::PrefillOptions EngineCaches::prefill_hooks(const CacheStart& start) {
  engine::PrefillOptions o;
  o.extra_lines = resident_.branch_lines();
  o.extra_lines.insert(o.extra_lines.end(), start.disk_lines.begin(), start.disk_lines.end());
  if (start.prefix_line > 0) o.extra_lines.push_back(start.prefix_line);  // maybe off the grid
  o.on_anchor = [this, &start](int64_t position, bool is_end) {
    // Every state this line makes (an anchor, a disk anchor, the store's prefix line) covers
    // the served tokens up to it.
    record_made(start.tenant, start.served.tokens, {position});
    resident_.on_anchor(engine_, position, is_end);
    // Every prefill hands the tier its job at the end, anchors or not: the admission counts
    // it just changed are saved by the writer.
    if (disk_) {
      if (!is_end) disk_->on_line(engine_, position);
      if (is_end) disk_->after_prefill(engine_);
    }
    if (start.prefix_line > 0 && position == start.prefix_line) {
      const int64_t taint = resident_.taint();
      const int64_t t =
          taint == cache::ResidentPrefix::kNoTaint ? cache::StateStore::kUntainted : taint;
      const std::span<const int32_t> prefix =
          std::span<const int32_t>(start.served.tokens).first(size_t(position));
      // Off the request path when the rows stay (not a guest's) and an anchor holds the
      // sections (settle_prefix). What the put did is counted in the store's stats.
      if (!resident_.guest_active() && resident_.anchor_at(position) != nullptr)
        pending_prefix_ = PendingPrefix{{prefix.begin(), prefix.end()}, t};
      else
        (void)store_.put_prefix(engine_, prefix, t);
    }
  };
  return o;
}

void EngineCaches::end(const GenerationJob& job, const CacheStart& start,
                       const engine::GenerationResult& result,
                       const std::vector<size_t>& hidden_sampled, int64_t prefill_tokens) {
  rows_used_ns_ = core::now_ns();
  answer_tenant_ = start.tenant;
  if (prefill_tokens > 0) planner_.note_prefill(prefill_tokens, result.prefill_ns);
  // Every token the engine forwarded: the prompt and the decoded ones (the last sampled token
  // is not decoded, generation.h).
  std::vector<int32_t> forwarded = start.served.tokens;
  forwarded.insert(forwarded.end(), result.tokens.begin(),
                   result.tokens.begin() + result.decode_steps);
  // The end anchor, the session snapshot and a spill of them cover every forwarded token.
  record_made(start.tenant, forwarded, {int64_t(forwarded.size())});
  if (int64_t(forwarded.size()) == engine_.length()) {
    std::string session = session_tag(job.session.hash(), !job.session.empty());
    if (resident_.guest_active()) {
      keep_snapshot(forwarded, session);
    } else {
      keep_end(start, forwarded, hidden_sampled);
      // The echo anchor's prediction runs in after_answer(), once the answer is out.
      echo_.reset();
      if (hidden_sampled.empty() && result.decode_steps >= 2)
        echo_ = EchoPlan{int64_t(start.served.tokens.size()), result.tokens, result.decode_steps};
      if (options_.store)
        pending_snapshot_ = PendingSnapshot{std::move(forwarded), std::move(session),
                                            int64_t(start.served.tokens.size())};
    }
  }
  core::ignore_status(resident_.finish_request(engine_), "cache: resident finish");
  publish_stats();
}

// The previous turn's session snapshot was deferred (end): the engine still holds that state,
// since nothing forwards between two requests. A request of the same session that starts with
// every token of it goes on from the end anchor in place and will leave its own snapshot, so
// the copy (the rows and sections of the whole conversation) is skipped; any other request
// may overwrite those rows, so the snapshot is taken now, before the plan sees the store.
void EngineCaches::settle_snapshot(std::span<const int32_t> served, const std::string& session) {
  if (!pending_snapshot_) return;
  PendingSnapshot p = std::move(*pending_snapshot_);
  pending_snapshot_.reset();
  const int64_t n = int64_t(p.tokens.size());
  // The client's copy of the answer may part from the generated tokens (re-tokenized, edited):
  // the turn still goes on in place from an anchor at or above its prompt's end (the end of
  // its prefill, an echo anchor), and a snapshot of the answer as generated would only serve a
  // client that sends it back as no client of this conversation did.
  const bool goes_on = session == p.session && common_prefix(p.tokens, served) >= p.prompt &&
                       int64_t(served.size()) > p.prompt && resident_.end_anchor().position() == n;
  ANCHORAGE_LOG_DEBUG("cache: session snapshot of %lld tokens %s", (long long)n,
                      goes_on ? "skipped (the turn goes on in place)" : "taken (the rows go)");
  if (goes_on) {
    ++served_stats_.snapshots_skipped;
    return;
  }
  // The engine no longer holds that state (a failed generation reset it): nothing to copy.
  if (engine_.length() != n) {
    ++served_stats_.snapshots_lost;
    return;
  }
  keep_snapshot(p.tokens, p.session);
}

// The last prefill's prefix line goes to the store: from the body anchor there and the rows
// below it, as long as both are still the prefix's (the anchor may have been shed, the rows
// replaced); otherwise it is given up (the store only misses an entry).
void EngineCaches::settle_prefix() {
  if (!pending_prefix_) return;
  PendingPrefix p = std::move(*pending_prefix_);
  pending_prefix_.reset();
  const int64_t n = int64_t(p.tokens.size());
  const cache::SectionCopy* at = resident_.anchor_at(n);
  if (!options_.store || at == nullptr || common_prefix(resident_.tokens(), p.tokens) < n ||
      engine_.length() < n)
    return;
  (void)store_.put_prefix_from(engine_, p.tokens, *at, p.taint);  // counted in its stats
}

void EngineCaches::keep_snapshot(const std::vector<int32_t>& forwarded,
                                 const std::string& session) {
  if (!options_.store) return;
  const int64_t taint = resident_.taint();
  (void)store_.put_session(  // counted in the store's stats
      engine_, forwarded,
      taint == cache::ResidentPrefix::kNoTaint ? cache::StateStore::kUntainted : taint, session);
}

// The end anchor, with this answer's marks: the region generated and the spans in it the client
// does not see (the prompt's tokens keep the marks they had, ResidentPrefix).
void EngineCaches::keep_end(const CacheStart& start, const std::vector<int32_t>& forwarded,
                            const std::vector<size_t>& hidden_sampled) {
  const int64_t base = int64_t(start.served.tokens.size());
  const int64_t f = int64_t(forwarded.size());
  cache::ConversationMarks added;
  for (size_t i : hidden_sampled) {
    const int64_t p = base + int64_t(i);
    if (p >= f) continue;
    if (!added.hidden.empty() && added.hidden.back().end == p) {
      added.hidden.back().end = p + 1;
    } else {
      added.hidden.push_back({p, p + 1});
    }
  }
  if (f > base) added.generated.emplace_back(base, f);
  resident_.keep_end(engine_, forwarded, std::move(added));
}

// The client sends the answer back as the text it got, and its next prompt re-tokenizes that
// text: where this gives other ids than the engine generated (a non-canonical sequence), the
// next turn parts inside the answer, below the end anchor, and under the exact policy resumes
// at the anchor below (the end of the prefill). Re-encoding the answer's text predicts the
// point; an anchor is taken there.
void EngineCaches::after_answer() {
  settle_prefix();
  // The branch points the prefill did not cut (ResidentOptions::defer_branch_tokens). The
  // writer copies no row from where a re-forward starts (it rewrites the same bits).
  if (!resident_.deferred_lines().empty()) {
    const std::vector<int64_t> lines = resident_.deferred_lines();
    auto taken = resident_.take_deferred_anchors(engine_, [this](int64_t first_row) {
      if (disk_) disk_->fence(first_row);
    });
    if (!taken) {
      core::ignore_status(taken.error(), "cache: deferred branch anchor failed");
      abandon();  // the engine's state is not trusted
      return;
    }
    // Lines of the last request's prefill, made now: that tenant's states.
    for (int64_t line : lines)
      if (resident_.anchor_at(line) != nullptr)
        record_made(answer_tenant_, resident_.tokens(), {line});
    if (*taken > 0) publish_stats();
  }
  if (!echo_) return;
  const EchoPlan plan = std::move(*echo_);
  echo_.reset();
  if (!options_.resident.branch_anchors) return;
  const int64_t d = echo_parting_point(tokenizer_, plan.answer);
  // At 0 the end of the prefill is the anchor already; at or past the end anchor (the
  // decoded rows) it serves.
  if (d <= 0 || d >= plan.decoded) return;
  // The writer copies only prompt rows (below base); the rows re-forwarded are the answer's.
  if (disk_) disk_->fence(plan.base);
  auto taken = resident_.take_echo_anchor(engine_, plan.base + d, plan.base, kEchoMaxTokens);
  if (!taken) {
    core::ignore_status(taken.error(), "cache: echo anchor failed");
    abandon();  // the engine's state is not trusted
    return;
  }
  publish_stats();
}

void EngineCaches::stock_spares(const std::function<bool()>& should_stop) {
  if (options_.spare_sets == 0) return;
  std::vector<size_t> sizes;
  for (const core::TensorSpec& spec : engine_.layout().sections)
    sizes.push_back(size_t(spec.bytes()));
  if (cache::SectionPool::instance().stock(
          sizes, options_.spare_sets,
          [this](size_t bytes) { return budget_.may_grow(int64_t(bytes)); }, should_stop) > 0)
    publish_stats();
}

void EngineCaches::put_response(const GenerationJob& job, const CacheStart& start,
                                cache::CachedResponse response) {
  if (!options_.response_cache || job.response_key.empty()) return;
  record_made(start.tenant, start.served.tokens, {int64_t(start.served.tokens.size())});
  // A declined put is counted in the response cache's stats.
  (void)responses_.put(start.served.tokens, job.response_key, std::move(response));
  publish_stats();
}

CachePeek EngineCaches::peek(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                             const SessionKey& session) {
  CacheStart start;
  const cache::OfferScope scope = scope_of(session);
  const std::string tag = session_tag(session.hash(), !session.empty());
  start.served = serve(prompt, prompt_text, tag, scope);
  const cache::Plan plan = planner_.plan(start.served.tokens, tag, scope);
  start.offer = plan.chosen;
  start_from(&start);
  CachePeek p;
  p.split = start.split;
  p.reread_eta_ms = plan.reread_eta_ms;
  p.restore_ms = plan.chosen.restore_ms;
  return p;
}

CachePrewarm EngineCaches::prewarm(const std::vector<int32_t>& prompt,
                                   const std::string& prompt_text, const SessionKey& session,
                                   const std::function<bool()>& yield) {
  CachePrewarm out;
  const cache::OfferScope scope = scope_of(session);
  const std::string tag = session_tag(session.hash(), !session.empty());
  const ServedPrompt served = serve(prompt, prompt_text, tag, scope);
  const cache::Plan plan = planner_.plan(served.tokens, tag, scope);
  const cache::ResumeOffer& chosen = plan.chosen;
  if (!spill_ || chosen.source != cache::ResumeSource::kSpill) {
    out.why = "not_on_disk";  // RAM needs nothing, or the disk tier reads during the prefill
    return out;
  }
  if (chosen.restore_ms > options_.prewarm_max_ms) {
    out.why = "too_long";
    return out;
  }
  const int64_t t0 = core::now_ns();
  if (!resident_.tokens().empty() && rows_used_ns_ != 0 &&
      t0 - rows_used_ns_ < options_.prewarm_idle_ms * 1000000) {
    out.why = "resident_in_use";
    return out;
  }
  const int64_t rows_in_place = exact_rows_in_place(served.tokens);
  // A read the memory Budget refuses with every level shed is refused before anything is
  // saved or displaced: a refused prewarm changes nothing (the refusal is counted).
  if (auto need = spill_->prewarm_bytes(served.tokens, chosen, rows_in_place);
      need && !budget_.read_fits(*need)) {
    core::ignore_status(budget_.make_room_for_read(*need), "cache: prewarm");
    out.why = "memory";
    publish_stats();
    return out;
  }
  save_before_prewarm();
  // The disk writer stops copying rows the read may overwrite: the entry's tokens are the
  // prompt's up to the offer at least, so none below that or the rows in place.
  if (disk_) disk_->fence(std::min(rows_in_place, chosen.resume_at));
  // The blocks read wait in RAM until the last is checked: charged to the memory Budget as a
  // prefill's workspace is (cheaper levels shed), or no read.
  auto r = spill_->prewarm(
      engine_, served.tokens, chosen, rows_in_place,
      [&] {
        if (options_.test_prewarm_block) options_.test_prewarm_block();
        return yield && yield();
      },
      [&](int64_t bytes) { return budget_.make_room_for_read(bytes); });
  if (!r) {
    const core::StatusCode code = r.error().code();
    out.why = code == core::StatusCode::kCancelled           ? "yielded"
              : code == core::StatusCode::kResourceExhausted ? "memory"
                                                             : "not_on_disk";
    // A refused entry or read leaves the engine untouched; any other failure may have
    // written part of it: nothing of it is trusted then.
    if (code != core::StatusCode::kCancelled && code != core::StatusCode::kNotFound &&
        code != core::StatusCode::kCorruption && code != core::StatusCode::kResourceExhausted)
      abandon();
    core::ignore_status(r.error(), "cache: prewarm");
    publish_stats();
    return out;
  }
  const int64_t n = int64_t(r->tokens.size());
  record_made(session.tenant, r->tokens, {n});
  resident_.adopt_conversation(
      engine_, r->tokens, r->session, r->taint,
      cache::ConversationMarks{std::move(r->hidden), std::move(r->regions)});
  out.prewarmed = true;
  out.tokens = n;
  out.read_ms = double(core::now_ns() - t0) * 1e-6;
  core::log(core::LogLevel::kInfo,
            "session spill: prewarmed a conversation of %lld tokens in %.0f ms", (long long)n,
            out.read_ms);
  publish_stats();
  return out;
}

// The rows are about to change: the previous turn's snapshot is taken now, and what the rows
// in place and the park hold goes to the spill when a give-up would save it.
void EngineCaches::save_before_prewarm() {
  settle_prefix();
  settle_snapshot({}, {});
  const int64_t keep_from = spill_->options().give_up_min_tokens;
  if (const cache::ParkedSession::Contents* p = resident_.parked();
      p != nullptr && p->rows_end() >= keep_from)
    core::ignore_status(save_parked(*p, cache::SpillWrite::kEviction),
                        "cache: the prewarm's save of the parked conversation failed");
  if (resident_.end_anchor().held() && resident_.end_anchor().position() >= keep_from)
    core::ignore_status(save_resident(cache::SpillWrite::kEviction, false),
                        "cache: the prewarm's save of the conversation in place failed");
}

// Rows in place a disk read need not write: the prompt's own below the taint (none in a guest).
int64_t EngineCaches::exact_rows_in_place(std::span<const int32_t> served) const {
  if (resident_.guest_active()) return 0;
  const int64_t taint = resident_.taint();
  return std::min(common_prefix(resident_.tokens(), served),
                  taint == cache::ResidentPrefix::kNoTaint ? INT64_MAX : taint);
}

void EngineCaches::abandon() {
  if (disk_) disk_->fence(0);
  pending_snapshot_.reset();
  pending_prefix_.reset();
  echo_.reset();
  resident_.clear();
  engine_.reset();
  publish_stats();
}

void EngineCaches::clear(bool disk) {
  if (disk_) disk_->fence(0);
  echo_.reset();
  if (disk_ && disk) disk_->clear(/*counts=*/true);
  if (spill_ && disk) spill_->clear();
  core::ignore_status(resident_.finish_request(engine_), "cache: resident finish");
  pending_snapshot_.reset();
  pending_prefix_.reset();
  resident_.clear();
  store_.clear();
  responses_.clear();
  ledger_.clear();
  summary_ahead_.clear();
  publish_stats();
}

void EngineCaches::clear_disk() {
  if (spill_) spill_->clear();
  if (!disk_) return;
  disk_->clear(/*counts=*/true);
  publish_stats();
}

void EngineCaches::publish_stats() {
  CacheStats s;
  const cache::ResidentOptions& ro = options_.resident;
  s.settings = CacheSettings{options_.resume_policy, ro.anchor_spacing,
                             ro.anchor_bytes,        ro.end_anchor,
                             options_.end_align,     ro.guest_max_tokens,
                             ro.stash_bytes,         ro.pin_bytes,
                             ro.park_bytes,          options_.store_options.prefix_chunk};
  s.served = served_stats_;
  const SummaryAheadStats& a = summary_ahead_.stats();
  s.served.summaries_started = a.started;
  s.served.summaries_prepared = a.prepared;
  s.served.summaries_stopped = a.stopped;
  s.served.summaries_failed = a.failed;
  s.served.summaries_served = a.served;
  s.served.summary_end = a.prepared_end;
  s.resident = resident_.stats();
  s.store_enabled = options_.store;
  s.store = store_.stats();
  s.response_enabled = options_.response_cache;
  s.response = responses_.stats();
  s.memory = budget_.stats();
  s.planner_tokens_per_s = planner_.tokens_per_s();
  s.planner_measured_prefills = planner_.measured_prefills();
  s.disk_enabled = disk_ != nullptr;
  if (disk_) s.disk = disk_->stats();
  s.spill_enabled = spill_ != nullptr;
  if (spill_) s.spill = spill_->stats();
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_ = std::move(s);
}

CacheStats EngineCaches::stats() const {
  CacheStats s;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    s = stats_;
  }
  // The disk tier's writer works between requests: its figures are read live (thread-safe).
  if (disk_) s.disk = disk_->stats();
  if (disk_ && disk_->guard() != nullptr) {
    s.write_guard_enabled = true;
    s.write_guard = disk_->guard()->stats();
  }
  return s;
}

}  // namespace anchorage::server

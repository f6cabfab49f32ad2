// EngineCaches: every cache tier of the one engine, and the steps the engine thread takes with
// them around a generation (docs/cache.md "In the server"). begin() is those steps in order:
//
//   serve                 the client's prompt -> a ServedPrompt: the tokens the engine reads and
//                         how they differ from the client's (exact policy: not at all; a
//                         compaction under --compaction continuation: the conversation in
//                         place and one new turn);
//   answer_from_responses an identical greedy request answered from the response cache;
//   plan_with_room        the Planner's pick among the offer sources, after the memory Budget
//                         made room for the prefill's workspace (503 when it cannot);
//   restore               the resident prefix prepares (guest, pin, park) and restores its own
//                         offer; another tier's offer is restored by that tier;
//   start_from            the only place that derives `exact`, `served` and the usage figures.
//
// Then the prefill runs with prefill_hooks() (resident anchors, the store's prefix line), the
// generation runs, and end() keeps the session snapshot and the end anchor.
//
// Sessions reach the tiers as a hash (hex), never as the client's key. Prompt text is used
// on the engine thread for the rows policy's alignment only and kept nowhere.
//
// Thread safety: begin/prefill_hooks/end/peek/clear run on the engine thread (or on a thread
// that holds the engine queue's idle lock); stats() from any thread (a snapshot taken under a
// mutex after every change).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/budget.h"
#include "cache/disk_tier.h"
#include "cache/planner.h"
#include "cache/resident_prefix.h"
#include "cache/response_cache.h"
#include "cache/section_pool.h"
#include "cache/session_spill.h"
#include "cache/state_store.h"
#include "cache/tenant_scope.h"
#include "core/status.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "server/cache_stats.h"
#include "server/compaction.h"
#include "server/served_prompt.h"
#include "server/session.h"
#include "server/summary_ahead.h"
#include "text/end_alignment.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

struct GenerationJob;

struct CacheOptions {
  bool enabled = true;  // --no-cache turns every tier off
  // exact: the engine reads the client's tokens (every answer equals --no-cache's); rows: it
  // may serve the rows' tokens where the client's text matches them (docs/exactness.md).
  ResumePolicy resume_policy = ResumePolicy::kExact;
  cache::ResidentOptions resident;
  // Spare state-copy sets faulted in after an answer, for the next request's captures
  // (stock_spares; 0: none). A follow-up copies the state one token before its end and at its
  // end, and at any anchor line or branch point it crosses, before its first token.
  size_t spare_sets = 3;
  bool store = true;  // the state store (session and prefix snapshots)
  cache::StateStoreOptions store_options;
  bool response_cache = false;  // --response-cache
  cache::ResponseCacheOptions response_options;
  cache::BudgetOptions budget;
  bool end_align = true;  // rows policy: align the client's copy by text at the end anchor
  cache::PlannerOptions planner;
  // The disk tier's root directory (its files go in <root>/disk, docs/disk-tier.md); empty:
  // no disk tier (--disk-cache off).
  std::string disk_root;
  cache::DiskTierOptions disk;
  cache::WriteGuardOptions write_guard;  // --disk-write-budget-gb
  // The session spill, in <disk_root>/sessions (docs/session-spill.md): --spill off turns it off.
  bool spill = true;
  cache::SessionSpillOptions spill_options;
  // --cache-scope tenant: no tier offers one tenant's states to another (tenant_scope.h); off:
  // every request may resume from any state (global).
  bool tenant_scope = false;
  // --compaction-prepare: the summary written ahead while the engine is idle (summary_ahead.h).
  CompactionPrepareOptions prepare;
  // POST /v1/cache/prewarm reads a conversation back only when the read is estimated under
  // prewarm_max_ms and no other conversation used the rows in place in the last
  // prewarm_idle_ms (the seed's "Peek and prewarm").
  double prewarm_max_ms = 3000.0;
  int64_t prewarm_idle_ms = 120000;
  // How long the prewarm waits for a running request to end (a waiting one: not at all).
  int prewarm_wait_ms = 3000;
  // Tests: called before each block a prewarm reads, ahead of its look for a request waiting
  // (a test makes one arrive there: the yield without a race).
  std::function<void()> test_prewarm_block;
};

// The tiers on the disk a server runs (either may be null).
struct DiskTiers {
  std::unique_ptr<cache::DiskTier> tier;
  std::unique_ptr<cache::SessionSpill> spill;
};

// Where a request starts, decided on the engine thread before its prefill.
struct CacheStart {
  ServedPrompt served;
  cache::ResumeOffer offer;                       // the restored offer (resume_at 0, kCold: none)
  CacheSplit split;                               // start_from's figures for usage
  int64_t prefix_line = 0;                        // the store's prefix snapshot line (0: none)
  std::vector<int64_t> disk_lines;                // where the disk tier copies sections
  std::optional<cache::CachedResponse> response;  // a response-cache hit: no engine work
  std::string tenant;                             // whose states the prefill makes

  int64_t resume_at() const { return offer.resume_at; }
};

// What /v1/cache/peek answers.
struct CachePeek {
  CacheSplit split;
  double reread_eta_ms = 0.0;  // the re-read and the restore's read (restore_ms)
  double restore_ms = 0.0;     // a disk tier's estimated read; 0 for RAM tiers
};

// What /v1/cache/prewarm answers.
struct CachePrewarm {
  bool prewarmed = false;
  // When not: not_on_disk, resident_in_use, too_long, memory, yielded (busy is the route's).
  std::string why;
  int64_t tokens = 0;    // the conversation read back, up to its end anchor
  double read_ms = 0.0;  // the prewarm's own time
};

class EngineCaches {
 public:
  EngineCaches(const CacheOptions& options, engine::Engine& engine,
               const text::Tokenizer& tokenizer);
  // Waits for the disk tier's writer (it reads the engine's rows: the engine outlives this).
  ~EngineCaches();
  EngineCaches(const EngineCaches&) = delete;
  EngineCaches& operator=(const EngineCaches&) = delete;

  const CacheOptions& options() const { return options_; }
  // Adds the disk tier (before the first request): the Planner asks it after every RAM tier,
  // and the request path restores from it, fences its writer and plans its writes.
  void attach_disk_tier(std::unique_ptr<cache::DiskTier> disk);
  // Adds the disk tier and the session spill; the spill's resident entry (the conversation a
  // drain saved) is read back into the engine at once, so the first request finds it in place.
  void attach_disk_tier(DiskTiers tiers);
  cache::DiskTier* disk_tier() { return disk_.get(); }
  cache::SessionSpill* session_spill() { return spill_.get(); }
  // The shutdown drain, with the engine idle for good: saves the parked conversation, then the
  // one in place as the resident one, to the session spill.
  void drain();

  // The steps up to the restore: the engine is then at start.resume_at() with the restored
  // state (or reset). ResourceExhausted: the prefill's workspace does not fit the memory peak
  // even with every cache shed (the caller answers 503).
  core::Result<CacheStart> begin(const GenerationJob& job);
  // The prefill hooks of a started request (anchor lines, the store's prefix line).
  engine::PrefillOptions prefill_hooks(const CacheStart& start);
  // After the generation (also after a cancelled one: the rows are valid).
  // `hidden_sampled`: indices of sampled tokens the client never saw.
  void end(const GenerationJob& job, const CacheStart& start,
           const engine::GenerationResult& result, const std::vector<size_t>& hidden_sampled,
           int64_t prefill_tokens);
  // After the answer went out, when no request waits (the engine queue calls it): an echo
  // anchor for the answer end() kept — where the client's copy of it, re-tokenized, is
  // predicted to part from the generated tokens (docs/cache.md "Echo anchors"). A request that
  // came first drops it.
  void after_answer();
  // Then, still idle: spare state-copy buffers faulted in for the next request's captures
  // (SectionPool::stock), as many sets as a follow-up's prefill takes before its first token,
  // each only while the memory budget allows it and should_stop() (a request waits) is false.
  void stock_spares(const std::function<bool()>& should_stop);
  // A response-cache entry for a finished greedy job (job.response_key not empty).
  void put_response(const GenerationJob& job, const CacheStart& start,
                    cache::CachedResponse response);

  // --compaction-prepare, the engine queue's idle step: whether the conversation in place wants
  // its summary written, and writing it (summary_ahead.h; should_stop: a request waits).
  bool summary_wanted() const;
  void prepare_summary(const std::function<bool()>& should_stop);

  // Where a prompt would resume, changing nothing (the peek route).
  CachePeek peek(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                 const SessionKey& session);
  // The conversation the peek finds on the spill read back whole into the engine and the
  // resident prefix (its next request resumes at its end anchor in place), after the
  // conversations in place and parked go to the spill when long enough to be. `yield` is asked
  // between blocks: true (a request arrived) leaves the rows in place as they were.
  CachePrewarm prewarm(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                       const SessionKey& session, const std::function<bool()>& yield);
  // After a failed generation: the engine's state is not trusted, nothing of it is kept.
  void abandon();
  // Empties every tier in RAM (the engine's rows stay, unowned); with `disk`, the disk tier's
  // files and admission counts too.
  void clear(bool disk = false);
  // Empties the disk tier only (its files and admission counts).
  void clear_disk();
  // Every tier's counters and bytes (GET /v1/cache/stats, /health, /metrics).
  CacheStats stats() const;

 private:
  // The request path's steps (the class comment).
  // Every step that may hand a request another request's state takes the request's scope.
  cache::OfferScope scope_of(const SessionKey& session) const;
  ServedPrompt serve(const GenerationJob& job, const std::string& session,
                     const cache::OfferScope& scope);
  ServedPrompt serve(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                     const std::string& session, const cache::OfferScope& scope) const;
  std::span<const int32_t> held_conversation(const std::string& session) const;
  std::optional<std::vector<int32_t>> continuation(const CompactionTurn& turn,
                                                   const std::string& session,
                                                   const cache::OfferScope& scope) const;
  std::optional<std::vector<int32_t>> align_by_text(const std::vector<int32_t>& prompt,
                                                    const std::string& prompt_text,
                                                    const std::string& session,
                                                    const cache::OfferScope& scope) const;
  // align_by_text over the session's spilled conversation, when its tokens part from the
  // prompt below its end (matching tokens need no alignment).
  std::optional<std::vector<int32_t>> align_spilled(const std::vector<int32_t>& prompt,
                                                    const std::string& prompt_text,
                                                    const std::string& session,
                                                    const cache::OfferScope& scope) const;
  // align_by_text over one record: `rows` to their end anchor at `e`.
  std::optional<std::vector<int32_t>> align_record(std::span<const int32_t> rows, int64_t e,
                                                   const cache::ConversationMarks& marks,
                                                   const std::vector<int32_t>& prompt,
                                                   const std::string& prompt_text,
                                                   const cache::OfferScope& scope) const;
  int64_t spill_aligned_end(const GenerationJob& job, const std::string& session,
                            const cache::OfferScope& scope, int64_t start) const;
  bool answer_from_responses(const GenerationJob& job, const cache::OfferScope& scope,
                             CacheStart* start);
  bool answer_from_prepared(const GenerationJob& job, const std::string& session,
                            CacheStart* start);
  core::Result<cache::Plan> plan_with_room(std::span<const int32_t> served,
                                           const std::string& session,
                                           const cache::OfferScope& scope);
  // --cache-scope tenant: the tenant's request made states of tokens.first(len).
  void record_made(const std::string& tenant, std::span<const int32_t> tokens,
                   std::initializer_list<int64_t> lengths);
  cache::ResumeOffer restore(std::span<const int32_t> served, const std::string& session,
                             int64_t max_tokens, cache::ResumeOffer chosen);
  core::Status restore_other_tier(std::span<const int32_t> served, const cache::ResumeOffer& chosen,
                                  int64_t rows_in_place);
  void start_from(CacheStart* start) const;
  int64_t exact_rows_in_place(std::span<const int32_t> served) const;
  void save_before_prewarm();
  void plan_disk_writes(const GenerationJob& job, const std::string& session, CacheStart* start);
  void spill_displaced(std::span<const int32_t> served, const std::string& session,
                       const cache::ResumeOffer& chosen);
  core::Status save_resident(cache::SpillWrite kind, bool resident);
  core::Status save_parked(const cache::ParkedSession::Contents& p, cache::SpillWrite kind);
  void spill_given_up(const cache::ParkedSession::Contents& p);
  void read_back_resident();
  void settle_snapshot(std::span<const int32_t> served, const std::string& session);
  void settle_prefix();
  // After the generation.
  void keep_snapshot(const std::vector<int32_t>& forwarded, const std::string& session);
  void keep_end(const CacheStart& start, const std::vector<int32_t>& forwarded,
                const std::vector<size_t>& hidden_sampled);
  void publish_stats();
  SummaryAhead::Conversation conversation_in_place() const;

  CacheOptions options_;
  engine::Engine& engine_;
  const text::Tokenizer& tokenizer_;
  cache::SparePoolLevel spare_level_{cache::SectionPool::instance()};  // the budget's first level
  cache::ResidentPrefix resident_;
  cache::StateStore store_;
  cache::ResponseCache responses_;
  cache::Budget budget_;
  cache::Planner planner_;
  std::unique_ptr<cache::DiskTier> disk_;
  std::unique_ptr<cache::SessionSpill> spill_;
  cache::TenantLedger ledger_;  // --cache-scope tenant: who made which state
  SummaryAhead summary_ahead_;  // --compaction-prepare
  // The last turn's session snapshot, not yet taken: the end anchor and the rows in place hold
  // the same state, so it is copied into the store only when the next request leaves them.
  struct PendingSnapshot {
    std::vector<int32_t> tokens;
    std::string session;
    int64_t prompt = 0;  // the turn's prompt: tokens from here on are its answer
  };
  std::optional<PendingSnapshot> pending_snapshot_;
  // The store's prefix line of the last prefill, not yet copied: the rows below it stay in
  // place after the request and the body anchor there holds its sections, so the copy waits
  // for the idle moment after the answer, or the next request's start (settle_prefix).
  struct PendingPrefix {
    std::vector<int32_t> tokens;
    int64_t taint = 0;  // as put_prefix takes it
  };
  std::optional<PendingPrefix> pending_prefix_;
  // The answer after_answer() looks at for an echo anchor: its sampled tokens from row `base`,
  // the first `decoded` of them forwarded (the end anchor covers those).
  struct EchoPlan {
    int64_t base = 0;
    std::vector<int32_t> answer;
    int64_t decoded = 0;
  };
  std::optional<EchoPlan> echo_;
  std::string answer_tenant_;  // whose request end() saw last (after_answer's states)
  int64_t rows_used_ns_ = 0;   // when a request last ended (the prewarm's resident_in_use)
  ServedStats served_stats_;   // counters of the steps above
  mutable std::mutex stats_mu_;
  CacheStats stats_;
};

// The hex form of a session hash the tiers see ("" without a session).
std::string session_tag(uint64_t hash, bool has_session);

}  // namespace anchorage::server

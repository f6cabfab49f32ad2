// EngineCaches: every cache tier of the one engine, and the steps the engine thread takes with
// them around a generation (docs/cache.md "In the server"):
//
//   1. the prompt the engine reads: the client's copy aligned on the rows' own tokens up to
//      the end anchor (text::align_end over the rendered text), else with the end anchor's
//      hidden spans put back (ResidentPrefix::replay), else as sent;
//   2. an identical greedy request answered from the response cache (when on);
//   3. the Planner's pick among the resident prefix (anchors, end, pin, park) and the store;
//   4. the memory Budget makes room for the prefill's workspace (503 when it cannot);
//   5. the chosen tier restores, the prefill runs with the anchor hooks (resident anchors,
//      the store's prefix line), the generation runs;
//   6. the session snapshot, the end anchor (with hidden spans), the response cache.
//
// Sessions reach the tiers as a hash (hex), never as the client's key. Prompt text is used
// on the engine thread for the alignment only and kept nowhere.
//
// Thread safety: begin/prefill_hooks/end/peek/clear run on the engine thread (or on a thread
// that holds the engine queue's idle lock); stats_json() from any thread (a snapshot taken
// under a mutex after every change).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/budget.h"
#include "cache/planner.h"
#include "cache/resident_prefix.h"
#include "cache/response_cache.h"
#include "cache/state_store.h"
#include "core/status.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "text/end_alignment.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

struct GenerationJob;

struct CacheOptions {
  bool enabled = true;  // --no-cache turns every tier off
  cache::ResidentOptions resident;
  bool store = true;  // the state store (session and prefix snapshots)
  cache::StateStoreOptions store_options;
  bool response_cache = false;  // --response-cache
  cache::ResponseCacheOptions response_options;
  cache::BudgetOptions budget;
  bool end_align = true;  // align the client's copy by text at the end anchor
  cache::PlannerOptions planner;
};

// Where a request starts, decided on the engine thread before its prefill.
struct CacheStart {
  std::vector<int32_t> served;  // the prompt the engine reads (may hold hidden tokens)
  int64_t resume_at = 0;        // served[0, resume_at) restored from a cache
  std::string tier = "none";
  std::string source = "cold";
  bool exact = true;                              // resumed == a cold prefill bit for bit
  std::string aligned = "none";                   // how served was made: none | text | replay
  int64_t prefix_line = 0;                        // the store's prefix snapshot line (0: none)
  std::optional<cache::CachedResponse> response;  // a response-cache hit: no engine work
};

// What /v1/cache/peek answers.
struct CachePeek {
  std::string tier = "none";
  std::string source = "cold";
  int64_t tokens = 0;  // the prompt as the engine would read it
  int64_t cached_tokens = 0;
  int64_t reread_tokens = 0;
  double reread_eta_ms = 0.0;
  std::string aligned = "none";
};

class EngineCaches {
 public:
  EngineCaches(const CacheOptions& options, engine::Engine& engine,
               const text::Tokenizer& tokenizer);
  EngineCaches(const EngineCaches&) = delete;
  EngineCaches& operator=(const EngineCaches&) = delete;

  const CacheOptions& options() const { return options_; }

  // Steps 1-5 up to the restore: the engine is then at start.resume_at with the restored
  // state (or reset). ResourceExhausted: the prefill's workspace does not fit the memory
  // peak even with every cache shed (the caller answers 503).
  core::Result<CacheStart> begin(const GenerationJob& job);
  // The prefill hooks of a started request (anchor lines, the store's prefix line).
  engine::PrefillOptions prefill_hooks(const CacheStart& start);
  // Step 6, after the generation (also after a cancelled one: the rows are valid).
  // `hidden_sampled`: indices of sampled tokens the client never saw.
  void end(const GenerationJob& job, const CacheStart& start,
           const engine::GenerationResult& result, const std::vector<size_t>& hidden_sampled,
           int64_t prefill_tokens);
  // A response-cache entry for a finished greedy job (job.response_key not empty).
  void put_response(const GenerationJob& job, const CacheStart& start,
                    cache::CachedResponse response);

  // Where a prompt would resume, changing nothing (the peek route).
  CachePeek peek(const std::vector<int32_t>& prompt, const std::string& prompt_text,
                 const std::string& session);
  // After a failed generation: the engine's state is not trusted, nothing of it is kept.
  void abandon();
  // Empties every tier (the engine's rows stay, unowned).
  void clear();
  // Every tier's counters and bytes (GET /v1/cache/stats, /health, /metrics).
  nlohmann::ordered_json stats_json() const;

 private:
  std::vector<int32_t> served_prompt(const std::vector<int32_t>& prompt,
                                     const std::string& prompt_text, std::string* how) const;
  void publish_stats();

  CacheOptions options_;
  engine::Engine& engine_;
  const text::Tokenizer& tokenizer_;
  cache::ResidentPrefix resident_;
  cache::StateStore store_;
  cache::ResponseCache responses_;
  cache::Budget budget_;
  cache::Planner planner_;
  // The generated regions of the rows in place (end alignment's "reasoning the client drops").
  std::vector<text::GeneratedRegion> regions_;
  std::vector<int32_t> rows_before_;  // the resident tokens when the request began
  // Counters of the steps above.
  int64_t aligned_text_ = 0;
  int64_t aligned_replay_ = 0;
  int64_t memory_refusals_ = 0;
  mutable std::mutex stats_mu_;
  nlohmann::ordered_json stats_;
};

// The hex form of a session hash the tiers see ("" without a session).
std::string session_tag(uint64_t hash, bool has_session);

}  // namespace anchorage::server

// SummaryAhead: the compaction summary written while the engine is idle (`--compaction-prepare`,
// docs/compaction.md "The summary written ahead"). When no request has come for a while and the
// conversation in place is a session's long one whose summary is not written yet, the engine
// runs that conversation's continuation (server/compaction.h) in scratch rows: it resumes at the
// end anchor, reads the compaction turn and samples the summary into the rows above the end
// anchor, then puts the end anchor's sections back and goes to the end anchor again — no anchor
// taken, the rows [0, end) untouched, nothing of it kept in the resident tier. The summary is
// kept here. A compaction request of that session that the caches serve as exactly those ids
// (the same conversation, the same turn) with the same sampling is answered from it without the
// engine.
//
// The turn and the sampling are those of the last compaction request seen (opencode sends the
// same ones every time), else opencode 1.18.33's turn with the server's default sampling. The
// summary is sampled with its own seed: it is served for a greedy request (the same tokens the
// engine would sample) or one without a seed (any seed's draw is as valid as another's), never
// for a request that sent its seed.
//
// Thread safety: none; the engine thread only. Holds token ids and log-probabilities, never text
// it logs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/response_cache.h"
#include "cache/state_copy.h"
#include "core/status.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "server/compaction.h"
#include "server/generation_job.h"
#include "text/tokenizer.h"

namespace anchorage::server {

struct SummaryAheadStats {
  int64_t started = 0;   // runs begun
  int64_t prepared = 0;  // summaries written to their end
  int64_t stopped = 0;   // runs a waiting request (or the shutdown) stopped
  int64_t failed = 0;    // runs the engine refused
  int64_t served = 0;    // compactions answered from a prepared summary
  // The end anchor of the conversation whose summary is held (0: none): a client (the opencode
  // end-to-end test) sees that the summary of the conversation in place is written.
  int64_t prepared_end = 0;
};

class SummaryAhead {
 public:
  // The conversation in place: its tokens up to the end anchor and the sections there.
  struct Conversation {
    std::span<const int32_t> record;
    std::string session;
    const cache::SectionCopy* end = nullptr;
  };

  explicit SummaryAhead(const CompactionPrepareOptions& options) : options_(options) {}

  const CompactionPrepareOptions& options() const { return options_; }
  // Every job that starts: the stop ids, and a compaction's turn, sampling and length.
  void learn(const GenerationJob& job);
  // Whether `c` wants its summary written (long enough, a session's, not written or tried yet).
  bool wanted(const Conversation& c) const;
  // Writes the summary of `c` (the engine holds its rows [0, end)); should_stop is asked before
  // every prefill call and after every sampled token. The engine is at the end anchor again
  // afterwards, its rows [0, end) and sections as they were; an error means it is not (the
  // caller drops the engine's state).
  core::Status prepare(engine::Engine& engine, const text::Tokenizer& tokenizer,
                       const Conversation& c, const std::function<bool()>& should_stop);
  // The answer to `job` whose served ids are `served`, from the prepared summary when it is
  // this session's at these ids and the job's sampling may take it (the class comment).
  std::optional<cache::CachedResponse> answer(const GenerationJob& job,
                                              std::span<const int32_t> served,
                                              const std::string& session);
  void clear();
  const SummaryAheadStats& stats() const { return stats_; }

 private:
  struct Recipe {
    std::string turn_text;
    engine::SamplingParams sampling;
    int64_t max_tokens = 0;
  };
  struct Prepared {
    std::string session;
    std::vector<int32_t> served;  // the conversation and the turn
    engine::SamplingParams sampling;
    std::vector<int32_t> stop_ids;
    std::vector<cache::CachedToken> tokens;  // stop ids carry no logprobs
    engine::FinishReason finish = engine::FinishReason::kMaxTokens;
  };
  Recipe recipe() const;

  CompactionPrepareOptions options_;
  std::optional<Recipe> learnt_;
  std::vector<int32_t> stop_ids_;
  std::optional<Prepared> prepared_;
  // The conversation last tried (written, or refused by the engine): not tried again.
  std::string tried_session_;
  std::vector<int32_t> tried_record_;
  SummaryAheadStats stats_;
};

}  // namespace anchorage::server

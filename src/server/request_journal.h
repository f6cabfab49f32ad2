// RequestJournal: one JSON line per request (`--journal FILE`, docs/http-api.md "Journal"), for
// proving from outside that follow-up turns forward only their new tokens: token counts, the
// cache split, times, and — when a follow-up re-read more than the tokens its client added —
// where the copy parted from what the session forwarded before, with a reason code. Never text:
// the session is its hash, tokens are counts and positions.
//
// "New tokens" of a request: its client prompt's tokens that the engine has not read for the
// same session: those after the longest common prefix with the prompt + answer of the
// session's earlier request it continues (of the last few, the one sharing the longest prefix:
// clients send title and summary requests under the conversation's key), capped at what the
// engine forwarded (an answer's last sampled token never is). The journal keeps those tokens
// for the last requests of the last `sessions` sessions it saw (ids, in memory only).
//
// The file is opened O_APPEND, 0600; above max_bytes it is renamed to FILE.1 (replacing an
// older one) and a new FILE started.
//
// Thread safety: record() from the engine thread; the internal mutex makes any thread safe.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/generation_job.h"

namespace anchorage::server {

struct JournalOptions {
  std::string path;                       // empty: no journal
  int64_t max_bytes = int64_t(64) << 20;  // rotate above this
  size_t sessions = 64;                   // sessions whose last tokens are remembered
};

// What one line says (also what tests read back).
struct JournalEntry {
  int64_t time_ms = 0;  // unix time
  uint64_t request_id = 0;
  std::optional<uint64_t> session;  // none without a session key
  int64_t prompt_tokens = 0;        // served
  int64_t client_prompt_tokens = 0;
  int64_t cached = 0;
  int64_t reread = 0;
  int64_t new_tokens = 0;  // client tokens the engine has not read for this session
  CacheSplit cache;
  int64_t ttft_ms = 0;
  int64_t total_ms = 0;
  int64_t generated = 0;
  const char* end = "";
  // When reread > new_tokens on a follow-up: where the copy parted from the session's previous
  // tokens, and why the re-read was longer (reason_name()).
  int64_t parted_at = -1;
  enum class Reason : uint8_t {
    kNone,
    kPromptChanged,  // parted inside the previous prompt (dropped reasoning, an edit, compaction)
    kRetokenized,    // parted inside the previous answer (its text re-tokenizes differently)
    // Retokenized where an echo anchor was planned, but this request came before the engine
    // was idle after the answer (docs/cache.md "Echo anchors").
    kEchoNotTaken,
    kNoAnchor,  // parted at or after what was forwarded, resumed below it (shed, displaced)
  } reason = Reason::kNone;
};

const char* reason_name(JournalEntry::Reason r);

class RequestJournal {
 public:
  static core::Result<std::unique_ptr<RequestJournal>> open(const JournalOptions& options);
  ~RequestJournal();
  RequestJournal(const RequestJournal&) = delete;
  RequestJournal& operator=(const RequestJournal&) = delete;

  // A finished request: the client's prompt, the tokens the engine sampled, its outcome.
  // Returns the entry written (tests).
  JournalEntry record(const GenerationJob& job, std::span<const int32_t> sampled,
                      const JobOutcome& out);

  int64_t write_errors() const;

 private:
  static constexpr size_t kPerSession = 4;  // earlier requests remembered per session
  explicit RequestJournal(const JournalOptions& options, int fd);
  struct History {
    uint64_t session = 0;
    int64_t prompt_end = 0;       // the previous prompt's length
    std::vector<int32_t> tokens;  // the previous prompt + answer
    int64_t forwarded_end = 0;    // of those, the ones the engine forwarded (all but the last)
  };
  void write_line(const std::string& line);

  JournalOptions options_;
  mutable std::mutex mu_;
  int fd_ = -1;
  int64_t bytes_ = 0;
  int64_t write_errors_ = 0;
  std::list<History> history_;  // most recent first
};

// The JSON line of an entry (no trailing newline).
std::string journal_line(const JournalEntry& e);

}  // namespace anchorage::server

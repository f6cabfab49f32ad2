// WriteGuard: the day's disk-write budget of the disk tier and the session spill (the seed's
// "The day's write budget"; docs/disk-tier.md "Write guard"). A drive has a rated life in bytes
// written; every byte the tiers write is added to the local day's count, kept across restarts
// in a small file beside them, and past the budget they write less:
//   ok     under --disk-write-budget-gb: everything;
//   over   past it: the disk tier plans nothing; the spill writes only a planned stop's drain and
//          evictions of long conversations (>= 32,768 tokens);
//   hard   past 1.5 times it: only the drain.
// Every skip is a cache not written, never an answer changed: counted, and logged once a day
// per kind.
//
// Thread safety: every method is thread-safe (the engine thread asks, the writer threads add).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/blob_store.h"
#include "core/status.h"

namespace anchorage::cache {

enum class WriteLevel : uint8_t { kOk, kOver, kHard };
const char* write_level_name(WriteLevel l);

// Who writes, and what a spill write is for.
enum class WriteSource : uint8_t { kTier, kSpill };
enum class SpillWrite : uint8_t { kDrain, kEviction };

struct WriteGuardOptions {
  int64_t budget_bytes = 200'000'000'000;    // --disk-write-budget-gb (decimal GB), per local day
  int64_t long_conversation_tokens = 32768;  // an eviction still written when over
  // Wall-clock seconds since the epoch (tests fake it) and the local time's offset from UTC
  // (the day turns at local midnight; open() takes it from the system unless set).
  std::function<int64_t()> now_s;
  std::optional<int64_t> utc_offset_s;
};

struct WriteDay {
  int64_t day = 0;  // days since the epoch, local time
  int64_t tier_bytes = 0;
  int64_t spill_bytes = 0;
};

struct WriteGuardStats {
  int64_t budget_bytes = 0;
  WriteLevel level = WriteLevel::kOk;
  WriteDay today;
  int64_t tier_skips = 0;           // disk tier plans not made (since start)
  int64_t spill_skips = 0;          // spill writes not made
  std::vector<WriteDay> last_days;  // the last 14 days with writes, newest first
};

class WriteGuard {
 public:
  // Reads the day counts from `store` (a missing or unreadable file starts at zero: only
  // figures are lost) and keeps them there.
  static std::unique_ptr<WriteGuard> open(BlobStore* store, WriteGuardOptions options);

  WriteLevel level() const;
  // Asked before the disk tier plans a request's writes; false (counted) past the budget.
  bool allow_tier();
  // Asked before a spill write; `tokens` is the conversation's length.
  bool allow_spill(SpillWrite kind, int64_t tokens);
  // Adds bytes written (after the write) and saves the counts.
  void add(WriteSource source, int64_t bytes);
  WriteGuardStats stats() const;

  static constexpr const char* kFileName = "writes.guard";

 private:
  WriteGuard(BlobStore* store, WriteGuardOptions options);
  int64_t today() const;
  WriteDay& day_locked(int64_t day);
  WriteLevel level_locked() const;
  void note_skip_locked(const char* what, int64_t* counter);
  void save_locked();

  BlobStore* store_;  // may be null (tests, no persistence)
  WriteGuardOptions options_;
  int64_t utc_offset_s_ = 0;
  mutable std::mutex mu_;
  std::map<int64_t, WriteDay> days_;  // by day
  int64_t tier_skips_ = 0;
  int64_t spill_skips_ = 0;
  int64_t logged_day_ = -1;  // the day whose skips were logged
  bool logged_tier_ = false;
  bool logged_spill_ = false;
};

}  // namespace anchorage::cache

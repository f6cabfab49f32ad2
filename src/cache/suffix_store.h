// SuffixStore: the persistent suffix store (issue 15 §1, docs/suffix-store.md): an append-only
// log of the token ids this engine read and wrote, in `<cache dir>/suffix/`, with a suffix
// array over it that the lookup drafter asks for the longest earlier match of a sequence's last
// tokens. Token ids only, never text; the caller never hands it image placeholder rows.
//
// What a request adds: its prompt and output (scope kAll) or its output (kOutputs), minus what
// one of the last four requests already added: from where the sequence parts from the one it
// shares the longest prefix with, with the kJoinOverlapTokens before that point in front, so
// every n-gram of up to that length across the join stays in the store.
//
// Over the cap (the log's bytes) it forgets the oldest half of its tokens, cut at the first
// document boundary at or after the half. It records the tokenizer's sha256 and refuses to open
// with another.
//
// Threading: add_request, lookup and stats may be called from any thread, at once. add_request
// does the deduplication and queues the record (O(its length), a short lock); a builder thread
// of the store's own writes the log, evicts and rebuilds the suffix array, then publishes the
// new index. lookup reads the published index and takes a lock only to copy a pointer, so no
// caller ever waits on a write or a rebuild; a record becomes visible to lookups when the
// rebuild that includes it is published (stats().indexed_tokens).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cache/suffix_index.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "core/status.h"
#include "engine/draft_source.h"

namespace anchorage::cache {

class SuffixLog;

enum class SuffixScope { kAll, kOutputs };

struct SuffixStoreOptions {
  uint64_t cap_bytes = uint64_t{192} << 20;  // --suffix-store-mb: ~48 M tokens at 4 bytes
  SuffixScope scope = SuffixScope::kAll;
  bool read_only = false;         // lookups only: nothing is written, repaired or deleted
  bool test_force_64bit = false;  // sort with divsufsort64 whatever the size
};

// The store's figures (on /health).
struct SuffixStoreStats {
  uint64_t tokens = 0;          // in the log (without document ends)
  uint64_t indexed_tokens = 0;  // in the published index (without document ends)
  int64_t documents = 0;
  uint64_t log_bytes = 0;           // the log's size as its format counts it
  uint64_t index_bytes = 0;         // text and suffix array of the published index
  int64_t requests = 0;             // add_request calls that were not refused
  int64_t appended_tokens = 0;      // tokens queued for the log (overlaps included)
  int64_t deduplicated_tokens = 0;  // tokens left out as already added by a recent request
  int64_t refused_requests = 0;     // read-only, or an id out of range
  int64_t evictions = 0;
  int64_t torn_tails = 0;       // torn tails dropped at open
  int64_t corrupt_deleted = 0;  // corrupt logs deleted at open (read-only: ignored)
  int64_t rebuilds = 0;
  double last_rebuild_ms = 0;
  double total_rebuild_ms = 0;
  std::string error;  // the first write or build failure (sticky), empty while all is well
};

class SuffixStore : public engine::DraftSource {
 public:
  // A sequence shares its first this many tokens with the part before the join (seed: 8).
  static constexpr int64_t kJoinOverlapTokens = 8;
  // How many recent requests a new one is deduplicated against (seed: 4).
  static constexpr size_t kRecentRequests = 4;

  // Opens `cache_dir`/suffix (0700; the log 0600) and starts the builder thread, which builds
  // the first index. Fails (the files untouched) with Corruption/kFingerprint when the store was
  // written for another tokenizer, with IOError when the file system fails.
  static core::Result<std::unique_ptr<SuffixStore>> open(core::Fs& fs, const std::string& cache_dir,
                                                         const core::Sha256Digest& tokenizer_sha,
                                                         const SuffixStoreOptions& options);
  // Writes what is queued, then stops the builder (a pending rebuild is skipped).
  ~SuffixStore() override;
  SuffixStore(const SuffixStore&) = delete;
  SuffixStore& operator=(const SuffixStore&) = delete;

  // Adds a finished request. Never waits on I/O or a rebuild.
  void add_request(std::span<const int32_t> prompt, std::span<const int32_t> output);

  // SuffixIndex::lookup on the published index.
  SuffixMatch lookup(std::span<const int32_t> context, int max_tokens, int min_match,
                     std::vector<int32_t>* out) const;

  // engine::DraftSource: the lookup drafter's fallback (lookup, the draft only).
  void continuation(std::span<const int32_t> context, int64_t max_tokens, int64_t min_match,
                    std::vector<int32_t>* out) const override;

  SuffixStoreStats stats() const;

  // Blocks until every request added so far is written and indexed (tests, benchmarks, a
  // planned stop; never an engine thread).
  void wait_idle();

 private:
  SuffixStore(std::unique_ptr<SuffixLog> log, std::vector<uint32_t> text, int64_t documents,
              const SuffixStoreOptions& options);
  void run() noexcept;  // the builder thread
  // Writes the queued records to the log and the text; evicts over the cap.
  void absorb(std::vector<std::vector<uint32_t>> records);
  void evict_oldest_half();
  void rebuild();
  // The part of `sequence` that is not yet in the store (maybe empty); updates recent_.
  std::vector<uint32_t> new_part(std::span<const int32_t> sequence);

  const SuffixStoreOptions options_;
  std::unique_ptr<SuffixLog> log_;  // null when read-only; the builder's only

  // The builder's: the log's documents, each followed by kDocumentEnd.
  std::vector<uint32_t> text_;
  int64_t documents_ = 0;

  // Its own lock: comparing a request with the recent ones takes O(their length), and a lookup
  // must not wait for that.
  std::mutex recent_mu_;
  std::deque<std::vector<int32_t>> recent_;  // guarded by recent_mu_: the last requests, whole

  mutable std::mutex mu_;
  std::condition_variable wake_;                // the builder: work or stop
  std::condition_variable idle_;                // wait_idle: done_ caught up
  std::vector<std::vector<uint32_t>> pending_;  // guarded by mu_
  std::shared_ptr<const SuffixIndex> index_;    // guarded by mu_
  int64_t queued_ = 0;                          // guarded by mu_: records queued so far
  int64_t done_ = -1;       // guarded by mu_: records indexed (-1: not even the first build)
  bool stop_ = false;       // guarded by mu_
  SuffixStoreStats stats_;  // guarded by mu_
  std::thread builder_;
};

}  // namespace anchorage::cache

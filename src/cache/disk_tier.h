// DiskTier: shared heads that survive restarts, deploys and other sessions (docs/disk-tier.md).
// It keeps, in a BlobStore (a local directory first), chunk files (rows [b - G, b) of every view
// and those token ids, keyed by the hash of the fingerprint and the whole prefix up to b) and
// anchor files (every section at a position, with the keys of the chunks below it), on the
// engine's grid G. An anchor is usable only when every chunk below it is in the store.
//
// The calls of one request, on the engine thread:
//   offer(prompt)                      -> the deepest usable anchor below the prompt's end
//   fence(first row the request writes)   before any restore or prefill touches rows
//   restore(engine, prompt, offer, rows_in_place) when the Planner chose the disk
//   plan_writes(request) -> lines to report in the prefill (PrefillOptions::extra_lines)
//   on_line(engine, position)             at each line the prefill reports: sections copied
//   after_prefill(engine, prompt)         the write job goes to the writer thread
// The writer thread copies the job's rows out of the engine's views while the request
// decodes (decode writes only rows past the prompt) and writes the files; the next request's
// fence stops the copy of rows it will overwrite, and the job's rest is dropped (counted as
// `window`). A write never holds a request; a failed write makes the tier refuse every later
// write (sticky, shown in stats and /health) but it keeps serving reads.
//
// Every file read is checked (fingerprint, layout, token ids against the prompt, crc32c of
// every section) before a byte reaches the engine; a file that fails is deleted with every
// anchor that needs it, and the request falls back (the caller starts cold).
//
// Thread safety: every public method but stats() runs on the engine thread; the writer thread
// and those share the index under a mutex.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/blob_store.h"
#include "cache/cache_key.h"
#include "cache/disk_admission.h"
#include "cache/disk_files.h"
#include "cache/offer_source.h"
#include "cache/resume_offer.h"
#include "cache/stat_field.h"
#include "cache/state_copy.h"
#include "cache/write_guard.h"
#include "core/state_layout.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

struct DiskTierOptions {
  int64_t budget_bytes = int64_t(16) << 30;   // --disk-budget-gb
  int64_t min_free_bytes = int64_t(5) << 30;  // --disk-min-free-gb (never below 5 % of the fs)
  int64_t ttl_s = 7 * 86400;                  // an anchor unused this long goes
  DiskAdmissionOptions admission;
  // Until the tier has measured its own reads: the read rate the Planner's cost assumes.
  double prior_read_bytes_per_s = 1.0e9;
  // Wall-clock seconds since the epoch (tests fake it; the TTL and the value's halving).
  std::function<int64_t()> now_s;
  // Tests: the writer takes no job until resume_writer() (a fence can then come first).
  bool writer_paused = false;
  // The day's write budget shared with the session spill (null: none): past it the tier plans
  // nothing, and every byte it writes is counted there.
  std::shared_ptr<WriteGuard> guard;
};

// Counters and bytes for /v1/cache/stats, /metrics (anchorage_disk_*) and /health.
struct DiskTierStats {
  int64_t chunks = 0;
  int64_t anchors = 0;
  int64_t bytes = 0;
  int64_t counted_lines = 0;
  int64_t hits = 0;
  int64_t hit_tokens = 0;
  int64_t read_bytes = 0;  // by restores
  int64_t restore_failures = 0;
  int64_t corrupt_files = 0;  // deleted after a failed check (the reasons go to the log)
  int64_t files_written = 0;
  int64_t bytes_written = 0;
  int64_t anchors_admitted = 0;  // planned by admission
  int64_t window_drops = 0;      // chunks a fence stopped before their rows were copied
  int64_t write_errors = 0;      // 1 once a write failed: the tier writes nothing more
  int64_t evictions = 0;
  int64_t evicted_bytes = 0;
  int64_t swept_files = 0;    // another fingerprint's, or unreadable, at open
  int64_t read_mb_per_s = 0;  // measured restore rate (prior until measured)
  // Files refused (at open or at a restore), by the check that caught them (core::Reason):
  // anchorage_cache_corrupt_total{tier="disk",reason=...}. Not in visit(): a labelled family.
  std::array<int64_t, 16> corrupt_by_reason{};
  int64_t write_mb_per_s = 0;  // measured write rate (0 until measured)

  template <class F>
  void visit(F&& f) const {
    f("chunks", chunks, StatKind::kGauge);
    f("anchors", anchors, StatKind::kGauge);
    f("bytes", bytes, StatKind::kGauge);
    f("counted_lines", counted_lines, StatKind::kGauge);
    f("hits", hits, StatKind::kCounter);
    f("hit_tokens", hit_tokens, StatKind::kCounter);
    f("read_bytes", read_bytes, StatKind::kCounter);
    f("restore_failures", restore_failures, StatKind::kCounter);
    f("corrupt_files", corrupt_files, StatKind::kCounter);
    f("files_written", files_written, StatKind::kCounter);
    f("bytes_written", bytes_written, StatKind::kCounter);
    f("anchors_admitted", anchors_admitted, StatKind::kCounter);
    f("window_drops", window_drops, StatKind::kCounter);
    f("write_errors", write_errors, StatKind::kGauge);
    f("evictions", evictions, StatKind::kCounter);
    f("evicted_bytes", evicted_bytes, StatKind::kCounter);
    f("swept_files", swept_files, StatKind::kCounter);
    f("read_mb_per_s", read_mb_per_s, StatKind::kGauge);
    f("write_mb_per_s", write_mb_per_s, StatKind::kGauge);
  }
};

// What admission gets from the request path.
struct DiskWriteRequest {
  std::span<const int32_t> prompt;
  int64_t resume_at = 0;
  bool exact = true;
  std::string session;    // the session tag ("" without one)
  int64_t head_end = -1;  // where the last user message starts; -1: unknown (the prompt's end)
  int64_t taint = INT64_MAX;
};

class DiskTier : public OfferSource {
 public:
  // Opens the tier over `store`: indexes its files (reading headers only), deletes another
  // fingerprint's, unreadable ones and chunks no anchor reads, reads the admission counts.
  // `grid` is the engine's anchor spacing; `layout` its state layout.
  static core::Result<std::unique_ptr<DiskTier>> open(std::unique_ptr<BlobStore> store,
                                                      std::string fingerprint,
                                                      const core::StateLayout& layout, int64_t grid,
                                                      DiskTierOptions options);
  ~DiskTier() override;
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  // OfferSource: the deepest usable anchor strictly below the prompt's end. restore_bytes and
  // restore_ms assume nothing is in place (the Planner compares it with the other tiers).
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const override;
  // Estimated milliseconds to read `bytes` at the tier's measured rate.
  double read_ms(int64_t bytes) const;

  // Reads the offer's anchor and the chunks above `rows_in_place` (rows [0, rows_in_place)
  // of the engine already hold this prompt's exact rows), checks everything, then writes the
  // sections and rows into the engine and resumes it at the anchor. On failure the engine's
  // rows from rows_in_place may have changed and its sections and length are not to be
  // trusted: the caller resets it and starts cold. The failed files are gone.
  core::Status restore(engine::Engine& engine, std::span<const int32_t> prompt,
                       const ResumeOffer& offer, int64_t rows_in_place);

  // Before a request writes rows from `first_row` on (a restore, a prefill, a guest): the
  // writer copies no row at or past it any more.
  void fence(int64_t first_row);

  // Admission, before the prefill: the lines the prefill must report (on_line), possibly none.
  std::vector<int64_t> plan_writes(const DiskWriteRequest& req);
  // At a line the prefill reports (engine at `position`): copies the sections when planned.
  void on_line(engine::Engine& engine, int64_t position);
  // After the prefill: hands the planned files to the writer thread.
  void after_prefill(engine::Engine& engine);

  // Keeps something as long as the tier lives (the root store its write guard saves into, the
  // directory's lock).
  void keep_alive(std::shared_ptr<void> held) { kept_.push_back(std::move(held)); }
  // The day's write budget, when the tier has one (null otherwise).
  const WriteGuard* guard() const { return options_.guard.get(); }

  // Waits until the writer has nothing left (tests, shutdown, the benchmark).
  void flush();
  // Lets a writer opened with writer_paused take its jobs.
  void resume_writer();
  // Deletes every file (and, with counts, the admission counts too).
  void clear(bool counts);
  DiskTierStats stats() const;

 private:
  struct ChunkEntry {
    ChunkInfo info;
    int readers = 0;  // anchors that list it
  };
  struct AnchorEntry {
    AnchorInfo info;
    int64_t hits = 0;
    int64_t last_used_s = 0;
  };
  struct Job;

  DiskTier(std::unique_ptr<BlobStore> store, std::string fingerprint,
           const core::StateLayout& layout, int64_t grid, DiskTierOptions options);
  core::Status scan();
  core::Status index_file_locked(const std::string& name, const CacheKey& key, bool is_anchor);
  void sweep_incomplete_locked();
  void read_admission_locked();
  int64_t now_s() const;
  void writer_loop();
  void run_job(Job& job);
  std::map<int64_t, ChunkInfo> chunk_chain(const Job& job) const;
  bool write_chunks(const Job& job, const std::map<int64_t, ChunkInfo>& chain, int64_t* written);
  void write_anchors(const Job& job, const std::map<int64_t, ChunkInfo>& chain, int64_t* written);
  void save_admission(const Job& job);
  void fail_writes_locked(const char* what, const core::Status& why);
  void count_written_locked(int64_t bytes, int64_t* written);
  // Deletes a file that failed a check, and every anchor that needs it (index_mu_ held).
  void drop_corrupt_locked(const CacheKey& key, bool is_anchor, const core::Status& why);
  void remove_anchor_locked(const CacheKey& key);
  void evict_locked();
  std::vector<std::byte> encode_usage_locked() const;
  double read_rate_locked() const;
  bool usable_locked(const AnchorEntry& a) const;
  bool usable_locked(const std::vector<CacheKey>& chunks) const;

  std::unique_ptr<BlobStore> store_;
  std::vector<std::shared_ptr<void>> kept_;  // keep_alive
  const std::string fingerprint_;
  const core::StateLayout layout_;
  const int64_t grid_;
  const DiskTierOptions options_;

  mutable std::mutex index_mu_;  // the index and the stats
  std::unordered_map<CacheKey, ChunkEntry, CacheKeyHash> chunks_;
  std::unordered_map<CacheKey, AnchorEntry, CacheKeyHash> anchors_;
  std::map<int64_t, int> anchor_positions_;  // position -> anchors there
  int64_t bytes_ = 0;
  DiskTierStats counts_;
  double read_bytes_per_s_ = 0.0;  // 0: not measured yet
  bool write_failed_ = false;

  // Engine thread only.
  AdmissionCounts admission_;
  std::unordered_map<std::string, int64_t> sessions_seen_;  // session tag -> last seen
  std::unique_ptr<Job> pending_;  // planned before the prefill, filled by on_line

  // The writer thread and its fence.
  std::mutex job_mu_;
  std::condition_variable job_cv_;
  std::deque<std::unique_ptr<Job>> jobs_;
  Job* running_ = nullptr;  // the job the writer is on (job_mu_)
  bool stop_ = false;
  bool paused_ = false;
  std::mutex rows_mu_;         // held while the writer copies rows out of the engine
  int64_t fence_ = INT64_MAX;  // rows at or past it are no longer the job's (rows_mu_)
  std::thread writer_;
};

}  // namespace anchorage::cache

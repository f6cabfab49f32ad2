#include "cache/suffix_store.h"

#include <algorithm>

#include "cache/suffix_log.h"
#include "cache/suffix_log_format.h"
#include "core/clock.h"

namespace anchorage::cache {
namespace {

// The log's size for `tokens` ids in `documents` records (its format: docs/suffix-store.md).
uint64_t log_bytes_for(uint64_t tokens, int64_t documents) {
  return kSuffixLogHeaderBytes + kSuffixRecordHeaderBytes * uint64_t(documents) + 4 * tokens;
}

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  size_t n = std::min(a.size(), b.size());
  return size_t(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
}

}  // namespace

core::Result<std::unique_ptr<SuffixStore>> SuffixStore::open(
    core::Fs& fs, const std::string& cache_dir, const core::Sha256Digest& tokenizer_sha,
    const SuffixStoreOptions& options) {
  auto opened = SuffixLog::open(fs, core::path_join(cache_dir, kSuffixDirName), tokenizer_sha,
                                options.read_only);
  if (!opened) return opened.status();
  auto store = std::unique_ptr<SuffixStore>(new SuffixStore(
      std::move(opened->log), std::move(opened->scan.text), opened->scan.documents, options));
  {
    std::lock_guard lock(store->mu_);
    store->stats_.torn_tails = opened->scan.torn_tail ? 1 : 0;
    store->stats_.corrupt_deleted = opened->deleted_corrupt ? 1 : 0;
  }
  return store;
}

SuffixStore::SuffixStore(std::unique_ptr<SuffixLog> log, std::vector<uint32_t> text,
                         int64_t documents, const SuffixStoreOptions& options)
    : options_(options), log_(std::move(log)), text_(std::move(text)), documents_(documents) {
  stats_.documents = documents_;
  stats_.tokens = text_.size() - uint64_t(documents_);
  stats_.log_bytes = log_bytes_for(stats_.tokens, documents_);
  builder_ = std::thread([this] { run(); });
}

SuffixStore::~SuffixStore() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  builder_.join();
}

std::vector<uint32_t> SuffixStore::new_part(std::span<const int32_t> sequence) {
  std::lock_guard lock(recent_mu_);
  size_t shared = 0;
  for (const auto& r : recent_) shared = std::max(shared, common_prefix(sequence, r));
  recent_.emplace_back(sequence.begin(), sequence.end());
  if (recent_.size() > kRecentRequests) recent_.pop_front();
  if (shared == sequence.size()) return {};  // all of it was added by a recent request
  size_t begin = shared > size_t(kJoinOverlapTokens) ? shared - kJoinOverlapTokens : 0;
  return std::vector<uint32_t>(sequence.begin() + begin, sequence.end());
}

void SuffixStore::add_request(std::span<const int32_t> prompt, std::span<const int32_t> output) {
  std::vector<int32_t> sequence;
  if (options_.scope == SuffixScope::kAll) sequence.assign(prompt.begin(), prompt.end());
  sequence.insert(sequence.end(), output.begin(), output.end());
  if (sequence.empty()) return;
  bool in_range = std::all_of(sequence.begin(), sequence.end(),
                              [](int32_t t) { return t >= 0 && uint32_t(t) < kDocumentEnd; });
  if (options_.read_only || !in_range || sequence.size() > kMaxSuffixRecordTokens) {
    std::lock_guard lock(mu_);
    ++stats_.refused_requests;
    return;
  }
  std::vector<uint32_t> record = new_part(sequence);
  {
    std::lock_guard lock(mu_);
    ++stats_.requests;
    stats_.appended_tokens += int64_t(record.size());
    stats_.deduplicated_tokens += int64_t(sequence.size()) - int64_t(record.size());
    if (record.empty()) return;
    pending_.push_back(std::move(record));
    ++queued_;
  }
  wake_.notify_one();
}

SuffixMatch SuffixStore::lookup(std::span<const int32_t> context, int max_tokens, int min_match,
                                std::vector<int32_t>* out) const {
  std::shared_ptr<const SuffixIndex> index;
  {
    std::lock_guard lock(mu_);
    index = index_;
  }
  if (!index) return SuffixMatch{};
  return index->lookup(context, max_tokens, min_match, out);
}

void SuffixStore::continuation(std::span<const int32_t> context, int64_t max_tokens,
                               int64_t min_match, std::vector<int32_t>* out) const {
  out->clear();
  if (max_tokens < 1 || min_match < 1) return;
  lookup(context, int(std::min<int64_t>(max_tokens, INT32_MAX)),
         int(std::min<int64_t>(min_match, INT32_MAX)), out);
}

SuffixStoreStats SuffixStore::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void SuffixStore::wait_idle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return done_ == queued_; });
}

void SuffixStore::run() noexcept {
  bool first = true;
  for (;;) {
    std::vector<std::vector<uint32_t>> records;
    int64_t queued = 0;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return first || stop_ || !pending_.empty(); });
      records.swap(pending_);
      queued = queued_;
    }
    absorb(std::move(records));
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      stopping = stop_;
    }
    // A stop writes what was queued and skips the rebuild: nobody looks up any more.
    if (stopping) return;
    rebuild();
    first = false;
    {
      std::lock_guard lock(mu_);
      done_ = queued;
    }
    idle_.notify_all();
  }
}

void SuffixStore::absorb(std::vector<std::vector<uint32_t>> records) {
  for (const auto& record : records) {
    if (log_) {
      // A failed write is sticky in the log; the store goes on in memory (hints only).
      core::Status s = log_->append(record);
      if (!s.is_ok()) {
        std::lock_guard lock(mu_);
        if (stats_.error.empty()) stats_.error = s.to_string();
      }
    }
    text_.insert(text_.end(), record.begin(), record.end());
    text_.push_back(kDocumentEnd);
    ++documents_;
  }
  while (documents_ > 0 &&
         log_bytes_for(text_.size() - documents_, documents_) > options_.cap_bytes) {
    evict_oldest_half();
  }
  std::lock_guard lock(mu_);
  stats_.documents = documents_;
  stats_.tokens = text_.size() - uint64_t(documents_);
  stats_.log_bytes = log_bytes_for(stats_.tokens, documents_);
}

void SuffixStore::evict_oldest_half() {
  // The first document boundary at or after half the text: the end of the document that holds
  // position half - 1.
  size_t half = text_.size() / 2;
  size_t cut = half == 0 ? 0 : half - 1;
  while (text_[cut] != kDocumentEnd) ++cut;  // the text ends with kDocumentEnd
  ++cut;
  int64_t dropped = std::count(text_.begin(), text_.begin() + cut, kDocumentEnd);
  text_.erase(text_.begin(), text_.begin() + cut);
  documents_ -= dropped;
  if (log_) {
    core::Status s = log_->rewrite(text_);
    if (!s.is_ok()) {
      std::lock_guard lock(mu_);
      if (stats_.error.empty()) stats_.error = s.to_string();
    }
  }
  std::lock_guard lock(mu_);
  ++stats_.evictions;
}

void SuffixStore::rebuild() {
  int64_t start_ns = core::now_ns();
  auto index = SuffixIndex::build(text_, options_.test_force_64bit);
  double ms = double(core::now_ns() - start_ns) * 1e-6;
  std::lock_guard lock(mu_);
  if (!index) {
    // Allocation failed: the old index stays (hints only).
    if (stats_.error.empty()) stats_.error = index.status().to_string();
    return;
  }
  index_ = std::move(*index);
  ++stats_.rebuilds;
  stats_.last_rebuild_ms = ms;
  stats_.total_rebuild_ms += ms;
  stats_.indexed_tokens = index_->text_tokens() - uint64_t(documents_);
  stats_.index_bytes = 4 * 2 * index_->text_tokens();
}

}  // namespace anchorage::cache

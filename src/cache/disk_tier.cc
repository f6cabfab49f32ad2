#include "cache/disk_tier.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <set>

#include "core/byte_order.h"
#include "core/clock.h"
#include "core/log.h"

namespace anchorage::cache {
namespace {

using core::get_u32le;
using core::get_u64le;
using core::put_u32le;
using core::put_u64le;

using core::Status;

constexpr const char* kAdmissionName = "admission.counts";
constexpr size_t kUsageRecordBytes =
    32;  // key lo, key hi (u64le), hits (u32le), 0, last use (i64le)
constexpr size_t kMaxSessionsSeen = 4096;

int64_t system_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// One request's planned files: filled by plan_writes and on_line on the engine thread, written
// by the writer thread.
struct DiskTier::Job {
  std::vector<int32_t> tokens;  // the prompt up to its highest planned anchor
  std::vector<int64_t> lines;   // planned anchor positions, ascending
  std::map<int64_t, SectionCopy> sections;
  std::vector<const void*> views;  // the engine's view buffers (rows copied under rows_mu_)
  int64_t fence = INT64_MAX;       // rows_mu_: rows at or past it are not the job's any more
  std::vector<std::byte> counts;   // the admission counts to persist
};

DiskTier::DiskTier(std::unique_ptr<BlobStore> store, std::string fingerprint,
                   const core::StateLayout& layout, int64_t grid, DiskTierOptions options)
    : store_(std::move(store)),
      fingerprint_(std::move(fingerprint)),
      layout_(layout),
      grid_(grid),
      options_(std::move(options)) {}

core::Result<std::unique_ptr<DiskTier>> DiskTier::open(std::unique_ptr<BlobStore> store,
                                                       std::string fingerprint,
                                                       const core::StateLayout& layout,
                                                       int64_t grid, DiskTierOptions options) {
  if (grid <= 0) return Status::invalid_argument("disk tier: the grid must be positive");
  std::unique_ptr<DiskTier> tier(
      new DiskTier(std::move(store), std::move(fingerprint), layout, grid, std::move(options)));
  if (Status s = tier->scan(); !s.is_ok()) return s;
  tier->paused_ = tier->options_.writer_paused;
  tier->writer_ = std::thread([t = tier.get()] { t->writer_loop(); });
  return tier;
}

DiskTier::~DiskTier() {
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    stop_ = true;
  }
  job_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

int64_t DiskTier::now_s() const {
  return options_.now_s ? options_.now_s() : system_now_s();
}

// Indexes the store: headers only. Another fingerprint's files, unreadable ones and chunks no
// anchor reads are deleted; so are anchors whose chunks are missing (a write that died between
// its files, or a chunk that was corrupt).
Status DiskTier::scan() {
  auto names = store_->list();
  if (!names) return names.error();
  std::lock_guard<std::mutex> lock(index_mu_);
  for (const std::string& name : *names) {
    if (name == kAdmissionName) continue;
    CacheKey key;
    bool is_anchor = false;
    if (!parse_blob_name(name, &key, &is_anchor)) continue;  // not the tier's: left alone
    const Status bad = index_file_locked(name, key, is_anchor);
    if (bad.is_ok()) continue;
    if (bad.reason() != core::Reason::kFingerprint && bad.code() == core::StatusCode::kCorruption)
      ++counts_.corrupt_by_reason[size_t(bad.reason()) % counts_.corrupt_by_reason.size()];
    if (bad.reason() != core::Reason::kFingerprint)
      ANCHORAGE_LOG_WARN("disk tier: %s refused at open (%s)", name.c_str(),
                         bad.to_string().c_str());
    ++counts_.swept_files;
    core::ignore_status(store_->remove(name), "disk tier: sweep a file");
  }
  sweep_incomplete_locked();
  read_admission_locked();
  // An anchor the usage records do not know (its writer died before saving them) counts as
  // used when it was written.
  for (auto& [key, a] : anchors_)
    if (a.last_used_s == 0) a.last_used_s = a.info.written_s;
  counts_.counted_lines = int64_t(admission_.size());
  evict_locked();
  return Status::ok();
}

// One file's header into the index; why not when it is refused.
Status DiskTier::index_file_locked(const std::string& name, const CacheKey& key, bool is_anchor) {
  auto file = store_->open(name);
  if (!file) return file.error();
  core::Result<CacheFile> f =
      CacheFile::open(std::move(*file), is_anchor ? CacheFileKind::kAnchor : CacheFileKind::kChunk);
  if (!f) return f.error();
  const Status differs =
      Status::corruption(core::Reason::kLengthRange, "key differs from its name");
  if (is_anchor) {
    auto info = anchor_info(*f, fingerprint_, layout_);
    if (!info) return info.error();
    if (info->key != key) return differs;
    AnchorEntry& a = anchors_[key];
    a.info = std::move(*info);
    bytes_ += int64_t(a.info.bytes);
    return Status::ok();
  }
  auto info = chunk_info(*f, fingerprint_, layout_);
  if (!info) return info.error();
  if (info->key != key) return differs;
  chunks_[key].info = *info;
  bytes_ += int64_t(info->bytes);
  return Status::ok();
}

// Anchors need every chunk below them; a chunk no anchor reads is of no use.
void DiskTier::sweep_incomplete_locked() {
  for (auto it = anchors_.begin(); it != anchors_.end();) {
    if (usable_locked(it->second)) {
      for (const CacheKey& c : it->second.info.chunks) ++chunks_[c].readers;
      ++anchor_positions_[it->second.info.position];
      ++it;
    } else {
      bytes_ -= int64_t(it->second.info.bytes);
      ++counts_.swept_files;
      core::ignore_status(store_->remove(anchor_name(it->first)), "disk tier: sweep an anchor");
      it = anchors_.erase(it);
    }
  }
  for (auto it = chunks_.begin(); it != chunks_.end();) {
    if (it->second.readers > 0) {
      ++it;
      continue;
    }
    bytes_ -= int64_t(it->second.info.bytes);
    ++counts_.swept_files;
    core::ignore_status(store_->remove(chunk_name(it->first)), "disk tier: sweep a chunk");
    it = chunks_.erase(it);
  }
}

// The admission counts and the anchors' use (a failed read only loses traffic figures).
void DiskTier::read_admission_locked() {
  auto file = store_->open(kAdmissionName);
  if (!file) return;
  auto f = CacheFile::open(std::move(*file), CacheFileKind::kCounts);
  Status s = f ? Status::ok() : f.error();
  if (s.is_ok() && f->sections().size() != 2)
    s = Status::corruption(core::Reason::kLayout, "admission file: two sections expected");
  std::vector<std::byte> counts, usage;
  if (s.is_ok()) {
    counts.resize(f->sections()[0].length);
    usage.resize(f->sections()[1].length);
    s = f->read_section(0, counts);
    if (s.is_ok()) s = f->read_section(1, usage);
    if (s.is_ok()) s = admission_.decode(counts);
    if (s.is_ok() && usage.size() % kUsageRecordBytes != 0)
      s = Status::corruption(core::Reason::kLengthRange, "admission file: usage records");
  }
  if (!s.is_ok()) {
    ANCHORAGE_LOG_WARN("disk tier: admission file refused (%s); counts start over",
                       s.to_string().c_str());
    admission_.clear();
    core::ignore_status(store_->remove(kAdmissionName), "disk tier: remove admission file");
    return;
  }
  for (size_t off = 0; off < usage.size(); off += kUsageRecordBytes) {
    const std::byte* p = usage.data() + off;
    auto it = anchors_.find(CacheKey{get_u64le(p), get_u64le(p + 8)});
    if (it == anchors_.end()) continue;
    it->second.hits = get_u32le(p + 16);
    it->second.last_used_s = int64_t(get_u64le(p + 24));
  }
}

bool DiskTier::usable_locked(const AnchorEntry& a) const {
  return usable_locked(a.info.chunks);
}

bool DiskTier::usable_locked(const std::vector<CacheKey>& chunks) const {
  for (const CacheKey& c : chunks)
    if (!chunks_.count(c)) return false;
  return true;
}

ResumeOffer DiskTier::offer(std::span<const int32_t> prompt, std::string_view) const {
  ResumeOffer best;
  std::lock_guard<std::mutex> lock(index_mu_);
  if (anchors_.empty()) return best;
  PrefixHasher hasher(fingerprint_);
  const int64_t m = int64_t(prompt.size());
  for (const auto& [position, n] : anchor_positions_) {
    if (position >= m) break;  // a useful offer leaves a token to prefill
    hasher.feed(prompt.subspan(size_t(hasher.fed()), size_t(position - hasher.fed())));
    auto it = anchors_.find(hasher.key());
    if (it == anchors_.end() || it->second.info.position != position || !usable_locked(it->second))
      continue;
    int64_t bytes = int64_t(it->second.info.bytes);
    for (const CacheKey& c : it->second.info.chunks) bytes += int64_t(chunks_.at(c).info.bytes);
    best.resume_at = position;
    best.source = ResumeSource::kDisk;
    best.restore_bytes = bytes;
    best.exact = true;  // a cold grid prefill's rows and sections, bit for bit
  }
  if (best.useful()) {
    const double rate = read_rate_locked();
    best.restore_ms = double(best.restore_bytes) / rate * 1e3;
  }
  return best;
}

// The tier's measured restore rate, or the prior before the first measured restore.
double DiskTier::read_rate_locked() const {
  return read_bytes_per_s_ > 0 ? read_bytes_per_s_ : options_.prior_read_bytes_per_s;
}

double DiskTier::read_ms(int64_t bytes) const {
  std::lock_guard<std::mutex> lock(index_mu_);
  const double rate = read_rate_locked();
  return double(bytes) / rate * 1e3;
}

Status DiskTier::restore(engine::Engine& engine, std::span<const int32_t> prompt,
                         const ResumeOffer& offer, int64_t rows_in_place) {
  const int64_t p = offer.resume_at;
  if (offer.source != ResumeSource::kDisk || p <= 0 || p >= int64_t(prompt.size()) ||
      p > engine.capacity())
    return Status::invalid_argument("disk tier: not a disk offer for this prompt");
  const CacheKey key = prefix_key(fingerprint_, prompt.first(size_t(p)));
  AnchorInfo anchor;
  std::vector<ChunkInfo> chunks;
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    auto it = anchors_.find(key);
    if (it == anchors_.end() || !usable_locked(it->second))
      return Status::not_found("disk tier: the offered anchor is gone");
    anchor = it->second.info;
    for (const CacheKey& c : anchor.chunks) chunks.push_back(chunks_.at(c).info);
  }
  const int64_t t0 = core::now_ns();
  int64_t read = 0;
  // A failed check deletes the file (and the anchors that need it) and refuses the restore.
  auto refuse = [&](const CacheKey& k, bool is_anchor, const Status& why) {
    std::lock_guard<std::mutex> lock(index_mu_);
    ++counts_.restore_failures;
    drop_corrupt_locked(k, is_anchor, why);
    return why;
  };
  // The anchor's sections first: small, and nothing reaches the engine before they check out.
  SectionCopy sections = SectionCopy::allocate(layout_, p, core::AlignedBuffer::Fill::kNone);
  {
    auto file = store_->open(anchor_name(anchor.key));
    if (!file) return refuse(anchor.key, true, file.error());
    auto f = CacheFile::open(std::move(*file), CacheFileKind::kAnchor);
    if (!f) return refuse(anchor.key, true, f.error());
    auto info = anchor_info(*f, fingerprint_, layout_);
    if (!info) return refuse(anchor.key, true, info.error());
    if (info->position != p || info->chunks != anchor.chunks)
      return refuse(anchor.key, true,
                    Status::corruption(core::Reason::kLayout, "disk tier: anchor changed"));
    if (Status s = read_anchor_sections(*f, &sections); !s.is_ok())
      return refuse(anchor.key, true, s);
    read += int64_t(f->file_bytes());
  }
  // Then each chunk above the rows in place: read and checked on a helper thread one chunk
  // ahead (the read of chunk i + 1 overlaps the copy of chunk i into the views), then written
  // into the views by this thread. Nothing reaches the engine before its checks passed.
  struct Loaded {
    Status status;
    RowCopy rows;
    int64_t file_bytes = 0;
  };
  auto load = [&](const ChunkInfo& c) {
    Loaded out;
    auto file = store_->open(chunk_name(c.key));
    if (!file) return Loaded{file.error(), {}, 0};
    auto f = CacheFile::open(std::move(*file), CacheFileKind::kChunk);
    if (!f) return Loaded{f.error(), {}, 0};
    auto info = chunk_info(*f, fingerprint_, layout_);
    if (!info) return Loaded{info.error(), {}, 0};
    if (info->begin != c.begin || info->end != c.end || info->prev != c.prev)
      return Loaded{Status::corruption(core::Reason::kLayout, "disk tier: chunk changed"), {}, 0};
    out.rows = RowCopy::allocate(layout_, c.begin, c.end, core::AlignedBuffer::Fill::kNone);
    out.status = read_chunk_rows(
        *f, *info, prompt.subspan(size_t(c.begin), size_t(c.end - c.begin)), &out.rows);
    out.file_bytes = int64_t(f->file_bytes());
    return out;
  };
  std::vector<const ChunkInfo*> wanted;
  for (const ChunkInfo& c : chunks)
    if (c.end > rows_in_place) wanted.push_back(&c);
  std::future<Loaded> next;
  if (!wanted.empty()) next = std::async(std::launch::async, load, *wanted[0]);
  for (size_t i = 0; i < wanted.size(); ++i) {
    Loaded cur = next.get();
    if (i + 1 < wanted.size()) next = std::async(std::launch::async, load, *wanted[i + 1]);
    if (!cur.status.is_ok()) {
      if (next.valid()) next.wait();  // its reads finish before the refusal deletes files
      return refuse(wanted[i]->key, false, cur.status);
    }
    if (Status s = cur.rows.write_back(engine); !s.is_ok()) return s;
    read += cur.file_bytes;
  }
  if (Status s = sections.write_back(engine); !s.is_ok()) return s;
  if (Status s = engine.resume_at(p); !s.is_ok()) return s;
  const double secs = double(core::now_ns() - t0) * 1e-9;
  std::lock_guard<std::mutex> lock(index_mu_);
  ++counts_.hits;
  counts_.hit_tokens += p;
  counts_.read_bytes += read;
  // Reads of a few MiB are dominated by opens and headers: measure the rate on larger ones.
  if (read >= (int64_t(8) << 20) && secs > 0) {
    const double rate = double(read) / secs;
    read_bytes_per_s_ = read_bytes_per_s_ > 0 ? 0.75 * read_bytes_per_s_ + 0.25 * rate : rate;
  }
  if (auto it = anchors_.find(key); it != anchors_.end()) {
    ++it->second.hits;
    it->second.last_used_s = now_s();
  }
  return Status::ok();
}

void DiskTier::fence(int64_t first_row) {
  std::lock_guard<std::mutex> jl(job_mu_);
  std::lock_guard<std::mutex> rl(rows_mu_);
  for (auto& j : jobs_) j->fence = std::min(j->fence, first_row);
  if (running_) running_->fence = std::min(running_->fence, first_row);
}

std::vector<int64_t> DiskTier::plan_writes(const DiskWriteRequest& req) {
  pending_.reset();
  const int64_t m = int64_t(req.prompt.size());
  AdmissionRequest a;
  a.prompt = req.prompt;
  a.resume_at = req.resume_at;
  a.exact = req.exact;
  a.head_end = req.head_end < 0 ? m : req.head_end;
  a.taint = req.taint;
  a.day = uint32_t(now_s() / 86400);
  if (!req.session.empty() && m >= options_.admission.min_tokens) {
    a.first_of_session = !sessions_seen_.count(req.session);
    sessions_seen_[req.session] = now_s();
    if (sessions_seen_.size() > kMaxSessionsSeen) {
      auto oldest =
          std::min_element(sessions_seen_.begin(), sessions_seen_.end(),
                           [](const auto& x, const auto& y) { return x.second < y.second; });
      sessions_seen_.erase(oldest);
    }
  }
  AdmissionPlan plan = admit(a, grid_, options_.admission, &admission_);
  auto job = std::make_unique<Job>();
  job->counts = admission_.encode();
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    counts_.counted_lines = int64_t(admission_.size());
    if (write_failed_) plan.anchors.clear();
    // Past the day's write budget the tier plans nothing (the counts above still count).
    if (!plan.anchors.empty() && options_.guard && !options_.guard->allow_tier())
      plan.anchors.clear();
    // An anchor already on the disk is not written again.
    PrefixHasher hasher(fingerprint_);
    std::erase_if(plan.anchors, [&](int64_t pos) {
      hasher.feed(req.prompt.subspan(size_t(hasher.fed()), size_t(pos - hasher.fed())));
      return anchors_.count(hasher.key()) > 0;
    });
    counts_.anchors_admitted += int64_t(plan.anchors.size());
  }
  job->lines = plan.anchors;
  if (!job->lines.empty())
    job->tokens.assign(req.prompt.begin(), req.prompt.begin() + job->lines.back());
  pending_ = std::move(job);
  return pending_->lines;
}

void DiskTier::on_line(engine::Engine& engine, int64_t position) {
  if (!pending_ || !std::binary_search(pending_->lines.begin(), pending_->lines.end(), position))
    return;
  if (engine.length() != position) return;
  pending_->sections.emplace(position, SectionCopy::capture(engine));
}

void DiskTier::after_prefill(engine::Engine& engine) {
  if (!pending_) return;
  std::unique_ptr<Job> job = std::move(pending_);
  // An anchor the prefill did not report (it resumed past it, or a line off the exact grid)
  // is not written.
  std::erase_if(job->lines, [&](int64_t p) { return !job->sections.count(p); });
  if (!job->lines.empty()) {
    job->tokens.resize(size_t(job->lines.back()));
    for (size_t i = 0; i < layout_.views.size(); ++i) job->views.push_back(engine.view_data(i));
  } else {
    job->tokens.clear();
  }
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    jobs_.push_back(std::move(job));
  }
  job_cv_.notify_all();
}

void DiskTier::flush() {
  std::unique_lock<std::mutex> lock(job_mu_);
  job_cv_.wait(lock, [&] { return jobs_.empty() && running_ == nullptr; });
}

void DiskTier::resume_writer() {
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    paused_ = false;
  }
  job_cv_.notify_all();
}

void DiskTier::writer_loop() {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(job_mu_);
      job_cv_.wait(lock, [&] { return stop_ || (!paused_ && !jobs_.empty()); });
      if (stop_ && paused_) return;
      if (jobs_.empty()) return;  // stop_ with nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = job.get();
    }
    run_job(*job);
    {
      std::lock_guard<std::mutex> lock(job_mu_);
      running_ = nullptr;
    }
    job_cv_.notify_all();
  }
}

// Writes the job's chunks bottom up, then each anchor whose chunks are all on the disk, then
// the admission file; then evicts down to the budget.
void DiskTier::run_job(Job& job) {
  const std::map<int64_t, ChunkInfo> chain = chunk_chain(job);
  int64_t written = 0;
  const int64_t t0 = core::now_ns();
  if (write_chunks(job, chain, &written)) write_anchors(job, chain, &written);
  const double secs = double(core::now_ns() - t0) * 1e-9;
  if (written >= (int64_t(8) << 20) && secs > 0) {
    std::lock_guard<std::mutex> lock(index_mu_);
    counts_.write_mb_per_s = int64_t(double(written) / secs / 1e6);
  }
  // The day's write count, once per job and outside the index lock (it saves a small file).
  if (options_.guard) options_.guard->add(WriteSource::kTier, written);
  save_admission(job);
  std::lock_guard<std::mutex> lock(index_mu_);
  evict_locked();
}

// Every chunk the job's anchors need, by end: the grid's, and a tail for an anchor off the
// grid, each keyed by the hash of every token below its end.
std::map<int64_t, ChunkInfo> DiskTier::chunk_chain(const Job& job) const {
  const int64_t top = job.lines.empty() ? 0 : job.lines.back();
  std::set<int64_t> ends;
  for (int64_t b = grid_; b <= top; b += grid_) ends.insert(b);
  for (int64_t p : job.lines) ends.insert(p);
  std::map<int64_t, ChunkInfo> chain;
  PrefixHasher hasher(fingerprint_);
  for (int64_t e : ends) {
    hasher.feed(std::span<const int32_t>(job.tokens)
                    .subspan(size_t(hasher.fed()), size_t(e - hasher.fed())));
    ChunkInfo c;
    c.key = hasher.key();
    c.end = e;
    c.begin = (e - 1) / grid_ * grid_;
    // A grid chunk's prev is the grid chunk below; a tail's is the grid chunk it extends.
    c.prev = c.begin == 0 ? CacheKey{} : chain.at(c.begin).key;
    chain[e] = c;
  }
  return chain;
}

// The chunks not on the disk yet, bottom up. False when a write failed (the tier then writes
// nothing more).
bool DiskTier::write_chunks(const Job& job, const std::map<int64_t, ChunkInfo>& chain,
                            int64_t* written) {
  for (const auto& [e, chunk] : chain) {
    {
      std::lock_guard<std::mutex> lock(index_mu_);
      if (write_failed_) return false;
      if (chunks_.count(chunk.key)) continue;
    }
    RowCopy rows;
    {
      std::lock_guard<std::mutex> lock(rows_mu_);
      if (chunk.end > job.fence) {
        std::lock_guard<std::mutex> il(index_mu_);
        ++counts_.window_drops;
        continue;
      }
      rows = RowCopy::allocate(layout_, chunk.begin, chunk.end, core::AlignedBuffer::Fill::kNone);
      for (size_t i = 0; i < layout_.views.size(); ++i)
        core::copy_rows_out(layout_.views[i], job.views[i], chunk.begin, chunk.end,
                            rows.mutable_part(i));
    }
    Status s = put_chunk(*store_, fingerprint_, chunk,
                         std::span<const int32_t>(job.tokens)
                             .subspan(size_t(chunk.begin), size_t(chunk.end - chunk.begin)),
                         rows, layout_);
    std::lock_guard<std::mutex> lock(index_mu_);
    if (!s.is_ok()) {
      fail_writes_locked("a chunk", s);
      return false;
    }
    ChunkInfo c = chunk;
    auto size = store_->size(chunk_name(c.key));
    c.bytes = size ? *size : 0;
    chunks_[c.key].info = c;
    count_written_locked(int64_t(c.bytes), written);
  }
  return true;
}

// Each anchor of the job whose chunks are all on the disk and that is not there yet.
void DiskTier::write_anchors(const Job& job, const std::map<int64_t, ChunkInfo>& chain,
                             int64_t* written) {
  for (int64_t p : job.lines) {
    AnchorInfo a;
    for (const auto& [e, c] : chain) {
      if (e > p) break;
      if (e % grid_ == 0 || e == p) a.chunks.push_back(c.key);
    }
    a.key = chain.at(p).key;
    a.position = p;
    a.written_s = now_s();
    {
      std::lock_guard<std::mutex> lock(index_mu_);
      if (!usable_locked(a.chunks) || anchors_.count(a.key)) continue;
    }
    Status s = put_anchor(*store_, fingerprint_, a, job.sections.at(p), layout_);
    std::lock_guard<std::mutex> lock(index_mu_);
    if (!s.is_ok()) {
      fail_writes_locked("an anchor", s);
      return;
    }
    auto size = store_->size(anchor_name(a.key));
    a.bytes = size ? *size : 0;
    const bool whole = usable_locked(a.chunks);  // an eviction may have raced the write
    for (const CacheKey& k : a.chunks)
      if (chunks_.count(k)) ++chunks_[k].readers;
    AnchorEntry& entry = anchors_[a.key];
    entry.info = a;
    entry.last_used_s = now_s();
    ++anchor_positions_[p];
    count_written_locked(int64_t(a.bytes), written);
    if (!whole) remove_anchor_locked(a.key);
  }
}

void DiskTier::fail_writes_locked(const char* what, const Status& why) {
  ANCHORAGE_LOG_WARN("disk tier: %s write failed (%s); the tier writes nothing more", what,
                     why.to_string().c_str());
  write_failed_ = true;
  counts_.write_errors = 1;
}

void DiskTier::count_written_locked(int64_t bytes, int64_t* written) {
  bytes_ += bytes;
  *written += bytes;
  ++counts_.files_written;
  counts_.bytes_written += bytes;
}

// The admission counts and the anchors' use: small, written after every request.
void DiskTier::save_admission(const Job& job) {
  std::vector<std::byte> usage;
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    if (write_failed_) return;
    usage = encode_usage_locked();
  }
  CacheFileWriter w(CacheFileKind::kCounts, CacheKey{},
                    nlohmann::json{{"records", job.counts.size() / 24}});
  w.add_section("counts", "u8", {int64_t(job.counts.size())}, job.counts);
  w.add_section("usage", "u8", {int64_t(usage.size())}, usage);
  core::ignore_status(store_->put(kAdmissionName, w.parts()),
                      "disk tier: admission counts not saved");
}

std::vector<std::byte> DiskTier::encode_usage_locked() const {
  std::vector<std::byte> usage(anchors_.size() * kUsageRecordBytes);
  std::byte* q = usage.data();
  for (const auto& [key, a] : anchors_) {
    put_u64le(q, key.lo);
    put_u64le(q + 8, key.hi);
    put_u32le(q + 16, uint32_t(std::min<int64_t>(a.hits, UINT32_MAX)));
    put_u32le(q + 20, 0);
    put_u64le(q + 24, uint64_t(a.last_used_s));
    q += kUsageRecordBytes;
  }
  return usage;
}

void DiskTier::remove_anchor_locked(const CacheKey& key) {
  auto it = anchors_.find(key);
  if (it == anchors_.end()) return;
  const AnchorInfo info = it->second.info;
  if (--anchor_positions_[info.position] == 0) anchor_positions_.erase(info.position);
  bytes_ -= int64_t(info.bytes);
  anchors_.erase(it);
  core::ignore_status(store_->remove(anchor_name(key)), "disk tier: remove an anchor");
  // Chunks no anchor reads any more go with it.
  for (const CacheKey& c : info.chunks) {
    auto ch = chunks_.find(c);
    if (ch == chunks_.end()) continue;
    if (--ch->second.readers > 0) continue;
    bytes_ -= int64_t(ch->second.info.bytes);
    chunks_.erase(ch);
    core::ignore_status(store_->remove(chunk_name(c)), "disk tier: remove a chunk");
  }
}

void DiskTier::drop_corrupt_locked(const CacheKey& key, bool is_anchor, const Status& why) {
  ANCHORAGE_LOG_WARN("disk tier: %s %s refused (%s); deleted", is_anchor ? "anchor" : "chunk",
                     key.hex().c_str(), why.to_string().c_str());
  ++counts_.corrupt_files;
  ++counts_.corrupt_by_reason[size_t(why.reason()) % counts_.corrupt_by_reason.size()];
  if (is_anchor) {
    remove_anchor_locked(key);
    return;
  }
  // Every anchor that reads the chunk goes (and with the last reader, the chunk).
  std::vector<CacheKey> readers;
  for (const auto& [k, a] : anchors_)
    if (std::find(a.info.chunks.begin(), a.info.chunks.end(), key) != a.info.chunks.end())
      readers.push_back(k);
  for (const CacheKey& k : readers) remove_anchor_locked(k);
  if (auto ch = chunks_.find(key); ch != chunks_.end()) {
    bytes_ -= int64_t(ch->second.info.bytes);
    chunks_.erase(ch);
    core::ignore_status(store_->remove(chunk_name(key)), "disk tier: remove a chunk");
  }
}

// By value (the seed's "Disk"): hits + 1, times the tokens an anchor saves per byte it holds
// alone (its file and its share of each chunk it reads), halved for every day unused. Anchors
// past the TTL go first; then the least valuable until the tier fits its budget and leaves
// the file system its free-space floor.
void DiskTier::evict_locked() {
  const int64_t now = now_s();
  std::vector<CacheKey> expired;
  for (const auto& [k, a] : anchors_)
    if (now - a.last_used_s > options_.ttl_s) expired.push_back(k);
  for (const CacheKey& k : expired) {
    counts_.evicted_bytes += int64_t(anchors_.at(k).info.bytes);
    ++counts_.evictions;
    remove_anchor_locked(k);
  }
  auto need = [&]() -> int64_t {
    int64_t over = bytes_ - options_.budget_bytes;
    if (auto space = store_->space()) {
      const int64_t floor =
          std::max<int64_t>(options_.min_free_bytes, int64_t(space->total_bytes / 20));
      over = std::max(over, floor - int64_t(space->available_bytes));
    }
    return over;
  };
  while (!anchors_.empty() && need() > 0) {
    const CacheKey* worst = nullptr;
    double worst_value = 0;
    for (const auto& [k, a] : anchors_) {
      double alone = double(a.info.bytes);
      for (const CacheKey& c : a.info.chunks)
        if (auto ch = chunks_.find(c); ch != chunks_.end())
          alone += double(ch->second.info.bytes) / std::max(1, ch->second.readers);
      const double days = double(std::max<int64_t>(0, now - a.last_used_s)) / 86400.0;
      const double value =
          double(a.hits + 1) * double(a.info.position) / std::max(alone, 1.0) * std::exp2(-days);
      if (!worst || value < worst_value) {
        worst = &k;
        worst_value = value;
      }
    }
    const int64_t before = bytes_;
    const CacheKey victim = *worst;
    remove_anchor_locked(victim);
    ++counts_.evictions;
    counts_.evicted_bytes += before - bytes_;
  }
}

void DiskTier::clear(bool counts) {
  fence(0);
  flush();
  std::lock_guard<std::mutex> lock(index_mu_);
  std::vector<CacheKey> keys;
  for (const auto& [k, a] : anchors_) keys.push_back(k);
  for (const CacheKey& k : keys) remove_anchor_locked(k);
  for (const auto& [k, c] : chunks_)
    core::ignore_status(store_->remove(chunk_name(k)), "disk tier: remove a chunk");
  chunks_.clear();
  bytes_ = 0;
  if (counts) {
    admission_.clear();
    sessions_seen_.clear();
    counts_.counted_lines = 0;
    core::Status s = store_->remove(kAdmissionName);
    if (!s.is_ok() && s.code() != core::StatusCode::kNotFound)
      core::ignore_status(s, "disk tier: remove the admission counts");
  }
}

DiskTierStats DiskTier::stats() const {
  std::lock_guard<std::mutex> lock(index_mu_);
  DiskTierStats s = counts_;
  s.chunks = int64_t(chunks_.size());
  s.anchors = int64_t(anchors_.size());
  s.bytes = bytes_;
  const double rate = read_rate_locked();
  s.read_mb_per_s = int64_t(rate / 1e6);
  return s;
}

}  // namespace anchorage::cache

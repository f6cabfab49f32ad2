#include "cache/spill_codec.h"

#include <blosc.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "cache/spill_planes.h"
#include "core/byte_order.h"

namespace anchorage::cache {
namespace {

using core::Reason;
using core::Status;

// docs/formats/spill-codec.md.
constexpr uint8_t kMagic[4] = {'A', 'S', 'C', 'F'};
constexpr uint8_t kVersion = 1;
constexpr uint8_t kFlagRaw = 1;          // the payload is the raw bytes
constexpr uint8_t kFlagPlanes = 2;       // kZstd: one zstd frame per plane of a segment
constexpr uint32_t kPartRaw = 1u << 31;  // a part table entry's "stored raw" bit
constexpr size_t kMinSegment = 4096;
constexpr size_t kMaxSegment = size_t(64) << 20;

void put_u32(uint8_t* p, uint32_t v) {
  core::put_u32le(reinterpret_cast<std::byte*>(p), v);
}
void put_u64(uint8_t* p, uint64_t v) {
  core::put_u64le(reinterpret_cast<std::byte*>(p), v);
}
uint32_t get_u32(const uint8_t* p) {
  return core::get_u32le(reinterpret_cast<const std::byte*>(p));
}
uint64_t get_u64(const uint8_t* p) {
  return core::get_u64le(reinterpret_cast<const std::byte*>(p));
}

// How a frame's raw bytes are cut: segments of `seg` bytes (the last one shorter) over the
// whole elements, each coded as `per_seg` parts of equal length, then a raw tail of n % e bytes.
struct Plan {
  size_t n = 0, e = 1, seg = 0, per_seg = 1;
  size_t full = 0, tail = 0, segments = 0;

  static Plan make(size_t n, size_t e, size_t seg, size_t per_seg) {
    Plan p;
    p.n = n;
    p.e = e;
    p.seg = seg;
    p.per_seg = per_seg;
    p.tail = n % e;
    p.full = n - p.tail;
    p.segments = seg == 0 ? 0 : (p.full + seg - 1) / seg;
    return p;
  }
  size_t seg_offset(size_t s) const { return s * seg; }
  size_t seg_len(size_t s) const { return std::min(seg, full - s * seg); }
  size_t part_len(size_t s) const { return seg_len(s) / per_seg; }
  size_t parts() const { return segments * per_seg; }
};

// Each thread keeps its zstd contexts and a plane buffer: contexts are costly to create and a
// segment's planes need one buffer of segment size.
struct ThreadCodec {
  ZSTD_CCtx* cctx = nullptr;
  ZSTD_DCtx* dctx = nullptr;
  std::unique_ptr<uint8_t[]> planes;
  size_t planes_size = 0;

  ~ThreadCodec() {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
  }
  uint8_t* plane_buffer(size_t n) {
    if (planes_size < n) {
      planes.reset(new uint8_t[n]);  // uninitialised: every byte is written before it is read
      planes_size = n;
    }
    return planes.get();
  }
  ZSTD_CCtx* c() {
    if (cctx == nullptr) cctx = ZSTD_createCCtx();
    return cctx;
  }
  ZSTD_DCtx* d() {
    if (dctx == nullptr) dctx = ZSTD_createDCtx();
    return dctx;
  }
};
ThreadCodec& thread_codec() {
  thread_local ThreadCodec t;
  return t;
}

// Runs task(i) for every i in [0, n) and then finish(), on the pool or inline; the future gets
// the first failure or finish's status. After a failure the remaining tasks are skipped.
struct Job {
  std::function<Status(size_t)> task;
  std::function<Status()> finish;
  std::atomic<size_t> remaining{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first;
  std::promise<Status> done;

  void fail(Status s) {
    std::lock_guard<std::mutex> l(mu);
    if (!failed.exchange(true)) first = std::move(s);
  }
  void run(size_t i) {
    if (!failed.load()) {
      if (Status s = task(i); !s.is_ok()) fail(std::move(s));
    }
    if (remaining.fetch_sub(1) == 1) {
      if (!failed.load()) {
        if (Status s = finish(); !s.is_ok()) fail(std::move(s));
      }
      done.set_value(failed.load() ? first : Status::ok());
    }
  }
};

std::future<Status> run_job(SpillCodecPool* pool, size_t n, std::function<Status(size_t)> task,
                            std::function<Status()> finish) {
  auto job = std::make_shared<Job>();
  job->task = std::move(task);
  job->finish = std::move(finish);
  std::future<Status> f = job->done.get_future();
  // A job with no segment still runs its finish step (as one empty task).
  const size_t tasks = std::max<size_t>(n, 1);
  job->remaining = tasks;
  if (n == 0) job->task = [](size_t) { return Status::ok(); };
  for (size_t i = 0; i < tasks; ++i) {
    if (pool != nullptr) {
      pool->submit([job, i] { job->run(i); });
    } else {
      job->run(i);
    }
  }
  return f;
}

std::future<Status> ready(Status s) {
  std::promise<Status> p;
  p.set_value(std::move(s));
  return p.get_future();
}

Status check_elem_bytes(size_t e) {
  if (e < 1 || e > kSpillCodecMaxElemBytes)
    return Status::invalid_argument("spill codec: elem_bytes " + std::to_string(e) +
                                    " is not 1 to 16");
  return Status::ok();
}

Status check_options(SpillCodecKind kind, const SpillCodecOptions& o) {
  if (o.segment_bytes < kMinSegment || o.segment_bytes > kMaxSegment)
    return Status::invalid_argument("spill codec: segment_bytes " +
                                    std::to_string(o.segment_bytes) + " is not 4 KiB to 64 MiB");
  if (kind == SpillCodecKind::kZstd && (o.level < ZSTD_minCLevel() || o.level > ZSTD_maxCLevel()))
    return Status::invalid_argument("spill codec: zstd level " + std::to_string(o.level));
  if (kind == SpillCodecKind::kBlosc) {
    if (o.level < 0 || o.level > 9)
      return Status::invalid_argument("spill codec: blosc level " + std::to_string(o.level));
    if (o.blosc_compressor == nullptr || blosc_compname_to_compcode(o.blosc_compressor) < 0)
      return Status::unsupported(std::string("spill codec: libblosc has no compressor '") +
                                 (o.blosc_compressor ? o.blosc_compressor : "") + "'");
  }
  return Status::ok();
}

void write_header(uint8_t* p, SpillCodecKind kind, size_t e, uint8_t flags, uint64_t raw,
                  uint64_t encoded, uint32_t seg) {
  std::memcpy(p, kMagic, 4);
  p[4] = kVersion;
  p[5] = uint8_t(kind);
  p[6] = uint8_t(e);
  p[7] = flags;
  put_u64(p + 8, raw);
  put_u64(p + 16, encoded);
  put_u32(p + 24, seg);
  put_u32(p + 28, 0);
}

// One segment's encoded parts, back to back, and their table entries.
struct SegmentOut {
  std::unique_ptr<uint8_t[]> bytes;
  size_t size = 0;
  std::vector<uint32_t> entries;
};

// Encodes segment s of `plan` (data is the frame's raw bytes) into `o`.
Status encode_segment(SpillCodecKind kind, const SpillCodecOptions& opt, const Plan& plan,
                      const uint8_t* data, size_t s, SegmentOut& o) {
  const size_t len = plan.seg_len(s);
  const size_t pl = plan.part_len(s);
  const uint8_t* src = data + plan.seg_offset(s);
  // A compressed part is stored only when smaller than the raw part, so the segment's parts
  // never take more than its raw length.
  o.bytes.reset(new uint8_t[len]);
  o.entries.clear();
  ThreadCodec& tc = thread_codec();
  if (kind == SpillCodecKind::kZstd && plan.e > 1) {
    uint8_t* planes = tc.plane_buffer(len);
    split_byte_planes(src, len / plan.e, plan.e, planes);
    src = planes;
  }
  // A part is kept compressed only when that saves more than 1/32 of it: a plane of mantissa
  // noise that zstd shrinks by 1 % decodes at ~1.4 GB/s, stored raw it is a copy.
  const size_t cap = pl - pl / 32 - 1;
  for (size_t p = 0; p < plan.per_seg; ++p) {
    const uint8_t* part = src + p * pl;
    uint8_t* dst = o.bytes.get() + o.size;
    long long got = -1;
    if (pl > 1 && kind == SpillCodecKind::kZstd) {
      const size_t r = ZSTD_compressCCtx(tc.c(), dst, cap, part, pl, opt.level);
      if (!ZSTD_isError(r)) got = (long long)r;
    } else if (pl > 1 && kind == SpillCodecKind::kBlosc) {
      const int r = blosc_compress_ctx(opt.level, BLOSC_SHUFFLE, plan.e, pl, part, dst, cap,
                                       opt.blosc_compressor, 0, 1);
      if (r > 0) got = r;
    }
    if (got > 0 && size_t(got) <= cap) {
      o.entries.push_back(uint32_t(got));
      o.size += size_t(got);
    } else {
      std::memcpy(dst, part, pl);
      o.entries.push_back(uint32_t(pl) | kPartRaw);
      o.size += pl;
    }
  }
  return Status::ok();
}

Status corrupt(Reason r, const std::string& m) {
  return Status::corruption(r, "spill codec frame: " + m);
}

// A checked frame: where each segment's parts start in the input.
struct Parsed {
  SpillCodecKind kind = SpillCodecKind::kNone;
  bool raw = false;
  Plan plan;
  std::vector<uint32_t> entries;
  std::vector<size_t> seg_in;  // input offset of each segment's first part
};

Status parse_frame(SpillCodecKind kind, const uint8_t* in, size_t n_in, size_t n_out, size_t e,
                   Parsed& f) {
  if (Status s = check_elem_bytes(e); !s.is_ok()) return s;
  if (in == nullptr && n_in > 0) return Status::invalid_argument("spill codec: null input");
  if (n_in < kSpillFrameHeaderBytes) return corrupt(Reason::kShortRead, "shorter than a header");
  if (std::memcmp(in, kMagic, 4) != 0) return corrupt(Reason::kBadMagic, "bad magic");
  if (in[4] != kVersion) return corrupt(Reason::kBadVersion, "version " + std::to_string(in[4]));
  if (in[5] != uint8_t(kind))
    return corrupt(Reason::kLayout,
                   "kind " + std::to_string(in[5]) + ", expected " + std::to_string(int(kind)));
  if (in[6] != e) return corrupt(Reason::kLayout, "elem_bytes " + std::to_string(in[6]));
  const uint8_t flags = in[7];
  const uint64_t raw_len = get_u64(in + 8);
  const uint64_t enc_len = get_u64(in + 16);
  const uint32_t seg = get_u32(in + 24);
  if ((flags & ~(kFlagRaw | kFlagPlanes)) != 0 || get_u32(in + 28) != 0)
    return corrupt(Reason::kLayout, "unknown flags or reserved bits");
  if (raw_len != n_out)
    return corrupt(Reason::kLengthRange,
                   "holds " + std::to_string(raw_len) + " bytes, not " + std::to_string(n_out));
  if (enc_len != n_in - kSpillFrameHeaderBytes)
    return corrupt(Reason::kLengthRange, "encoded length disagrees with the input");
  f.kind = kind;
  f.raw = (flags & kFlagRaw) != 0;
  if (f.raw) {
    if (flags != kFlagRaw || seg != 0 || enc_len != raw_len)
      return corrupt(Reason::kLengthRange, "raw frame lengths");
    return Status::ok();
  }
  if (kind == SpillCodecKind::kNone) return corrupt(Reason::kLayout, "kind none not raw");
  const bool planes = (flags & kFlagPlanes) != 0;
  if (planes && kind != SpillCodecKind::kZstd) return corrupt(Reason::kLayout, "planes flag");
  if (seg < e || seg % e != 0 || seg > kMaxSegment)
    return corrupt(Reason::kLengthRange, "segment bytes " + std::to_string(seg));
  f.plan = Plan::make(n_out, e, seg, planes ? e : 1);
  const uint64_t table_room = (n_in - kSpillFrameHeaderBytes) / 4;
  if (f.plan.parts() > table_room) return corrupt(Reason::kShortRead, "part table cut off");
  const size_t parts = f.plan.parts();
  f.entries.resize(parts);
  f.seg_in.resize(f.plan.segments);
  uint64_t at = kSpillFrameHeaderBytes + 4 * uint64_t(parts);
  for (size_t s = 0; s < f.plan.segments; ++s) {
    f.seg_in[s] = size_t(at);
    const size_t pl = f.plan.part_len(s);
    for (size_t p = 0; p < f.plan.per_seg; ++p) {
      const size_t i = s * f.plan.per_seg + p;
      const uint32_t v = get_u32(in + kSpillFrameHeaderBytes + 4 * i);
      const size_t stored = v & ~kPartRaw;
      if ((v & kPartRaw) != 0 ? stored != pl : (stored == 0 || stored >= pl))
        return corrupt(Reason::kLengthRange, "part " + std::to_string(i) + " length");
      f.entries[i] = v;
      at += stored;
    }
  }
  if (at + f.plan.tail != n_in)
    return corrupt(Reason::kLengthRange, "parts and tail do not fill the frame");
  return Status::ok();
}

Status decode_segment(const Parsed& f, const uint8_t* in, uint8_t* out, size_t s) {
  const Plan& plan = f.plan;
  const size_t len = plan.seg_len(s);
  const size_t pl = plan.part_len(s);
  uint8_t* seg_out = out + plan.seg_offset(s);
  ThreadCodec& tc = thread_codec();
  const bool join = f.kind == SpillCodecKind::kZstd && plan.e > 1;
  uint8_t* dst = join ? tc.plane_buffer(len) : seg_out;
  const uint8_t* src = in + f.seg_in[s];
  for (size_t p = 0; p < plan.per_seg; ++p) {
    const uint32_t v = f.entries[s * plan.per_seg + p];
    const size_t stored = v & ~kPartRaw;
    uint8_t* part = dst + p * pl;
    if ((v & kPartRaw) != 0) {
      std::memcpy(part, src, pl);
    } else if (f.kind == SpillCodecKind::kZstd) {
      const size_t r = ZSTD_decompressDCtx(tc.d(), part, pl, src, stored);
      if (ZSTD_isError(r) || r != pl)
        return corrupt(Reason::kSectionCrc, "segment " + std::to_string(s) + " does not decode");
    } else {
      size_t nbytes = 0;
      if (blosc_cbuffer_validate(src, stored, &nbytes) != 0 || nbytes != pl ||
          blosc_decompress_ctx(src, part, pl, 1) != int(pl))
        return corrupt(Reason::kSectionCrc, "segment " + std::to_string(s) + " does not decode");
    }
    src += stored;
  }
  if (join) join_byte_planes(dst, len / plan.e, plan.e, seg_out);
  return Status::ok();
}

std::future<Status> encode_job(SpillCodecKind kind, const uint8_t* data, size_t n, size_t e,
                               std::vector<uint8_t>* out, const SpillCodecOptions& options,
                               SpillCodecPool* pool) {
  if (Status s = check_elem_bytes(e); !s.is_ok()) return ready(s);
  if (kind != SpillCodecKind::kNone && kind != SpillCodecKind::kZstd &&
      kind != SpillCodecKind::kBlosc)
    return ready(Status::invalid_argument("spill codec: unknown kind"));
  if (Status s = check_options(kind, options); !s.is_ok()) return ready(s);
  if (data == nullptr && n > 0) return ready(Status::invalid_argument("spill codec: null data"));
  const size_t seg = std::max(e, options.segment_bytes / e * e);
  const bool planes = kind == SpillCodecKind::kZstd && options.frame_per_plane;
  const Plan plan = kind == SpillCodecKind::kNone ? Plan::make(n, e, 0, 1)
                                                  : Plan::make(n, e, seg, planes ? e : 1);
  auto segs = std::make_shared<std::vector<SegmentOut>>(plan.segments);
  const SpillCodecOptions opt = options;
  auto task = [=](size_t s) { return encode_segment(kind, opt, plan, data, s, (*segs)[s]); };
  auto finish = [=]() {
    size_t body = 0;
    for (const SegmentOut& so : *segs) body += so.size;
    const size_t table = 4 * plan.parts();
    const size_t encoded = table + body + plan.tail;
    if (kind == SpillCodecKind::kNone || encoded >= n) {
      out->resize(kSpillFrameHeaderBytes + n);
      write_header(out->data(), kind, e, kFlagRaw, n, n, 0);
      if (n > 0) std::memcpy(out->data() + kSpillFrameHeaderBytes, data, n);
      return Status::ok();
    }
    out->resize(kSpillFrameHeaderBytes + encoded);
    uint8_t* p = out->data();
    write_header(p, kind, e, planes ? kFlagPlanes : 0, n, encoded, uint32_t(seg));
    p += kSpillFrameHeaderBytes;
    for (const SegmentOut& so : *segs) {
      for (uint32_t v : so.entries) {
        put_u32(p, v);
        p += 4;
      }
    }
    for (const SegmentOut& so : *segs) {
      std::memcpy(p, so.bytes.get(), so.size);
      p += so.size;
    }
    if (plan.tail > 0) std::memcpy(p, data + plan.full, plan.tail);
    return Status::ok();
  };
  return run_job(pool, plan.segments, task, finish);
}

std::future<Status> decode_job(SpillCodecKind kind, const uint8_t* in, size_t n_in, uint8_t* out,
                               size_t n_out, size_t e, SpillCodecPool* pool) {
  auto f = std::make_shared<Parsed>();
  if (Status s = parse_frame(kind, in, n_in, n_out, e, *f); !s.is_ok()) return ready(s);
  if (out == nullptr && n_out > 0) return ready(Status::invalid_argument("spill codec: null out"));
  if (f->raw) {
    if (n_out > 0) std::memcpy(out, in + kSpillFrameHeaderBytes, n_out);
    return ready(Status::ok());
  }
  const size_t tail = f->plan.tail;
  if (tail > 0) std::memcpy(out + f->plan.full, in + n_in - tail, tail);
  return run_job(
      pool, f->plan.segments, [=](size_t s) { return decode_segment(*f, in, out, s); },
      [] { return Status::ok(); });
}

}  // namespace

const char* spill_codec_name(SpillCodecKind kind) {
  switch (kind) {
    case SpillCodecKind::kNone:
      return "none";
    case SpillCodecKind::kZstd:
      return "zstd";
    case SpillCodecKind::kBlosc:
      return "blosc";
  }
  return "unknown";
}

core::Result<SpillCodecKind> parse_spill_codec(std::string_view name) {
  if (name == "none") return SpillCodecKind::kNone;
  if (name == "zstd") return SpillCodecKind::kZstd;
  if (name == "blosc") return SpillCodecKind::kBlosc;
  return Status::invalid_argument("--spill-codec: '" + std::string(name) +
                                  "' is not zstd, blosc or none");
}

core::Result<uint64_t> spill_frame_raw_bytes(const uint8_t* in, size_t n_in) {
  if (in == nullptr || n_in < kSpillFrameHeaderBytes)
    return corrupt(Reason::kShortRead, "shorter than a header");
  if (std::memcmp(in, kMagic, 4) != 0) return corrupt(Reason::kBadMagic, "bad magic");
  if (in[4] != kVersion) return corrupt(Reason::kBadVersion, "version " + std::to_string(in[4]));
  return get_u64(in + 8);
}

Status spill_encode(SpillCodecKind kind, const uint8_t* data, size_t n, size_t elem_bytes,
                    std::vector<uint8_t>& out, const SpillCodecOptions& options,
                    SpillCodecPool* pool) {
  return encode_job(kind, data, n, elem_bytes, &out, options, pool).get();
}

core::Result<const uint8_t*> spill_raw_bytes(SpillCodecKind kind, const uint8_t* in, size_t n_in,
                                             size_t n_out, size_t elem_bytes) {
  Parsed f;
  if (Status s = parse_frame(kind, in, n_in, n_out, elem_bytes, f); !s.is_ok()) return s;
  return f.raw ? in + kSpillFrameHeaderBytes : nullptr;
}

Status spill_decode(SpillCodecKind kind, const uint8_t* in, size_t n_in, uint8_t* out, size_t n_out,
                    size_t elem_bytes, SpillCodecPool* pool) {
  return decode_job(kind, in, n_in, out, n_out, elem_bytes, pool).get();
}

SpillCodecPool::SpillCodecPool(int n_threads) {
  for (int i = 0; i < std::max(n_threads, 1); ++i) workers_.emplace_back([this] { worker_loop(); });
}

SpillCodecPool::~SpillCodecPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void SpillCodecPool::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> l(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void SpillCodecPool::worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and every queued task has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

std::future<Status> SpillCodecPool::encode_async(SpillCodecKind kind, const uint8_t* data, size_t n,
                                                 size_t elem_bytes, std::vector<uint8_t>* out,
                                                 const SpillCodecOptions& options) {
  if (out == nullptr) return ready(Status::invalid_argument("spill codec: null out"));
  return encode_job(kind, data, n, elem_bytes, out, options, this);
}

std::future<Status> SpillCodecPool::decode_async(SpillCodecKind kind, const uint8_t* in,
                                                 size_t n_in, uint8_t* out, size_t n_out,
                                                 size_t elem_bytes) {
  return decode_job(kind, in, n_in, out, n_out, elem_bytes, this);
}

}  // namespace anchorage::cache

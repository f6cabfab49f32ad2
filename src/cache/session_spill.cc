#include "cache/session_spill.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <future>
#include <latch>

#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "cache/cache_file.h"
#include "cache/cache_file_format.h"
#include "cache/disk_files.h"
#include "core/byte_order.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/token_prefix.h"

namespace anchorage::cache {

using core::common_prefix;
namespace {

using core::Reason;
using core::Status;
using Sums = std::vector<std::array<uint64_t, 2>>;

constexpr const char* kManifestSuffix = ".manifest";
constexpr const char* kBlockSuffix = ".block";

std::string block_name(const CacheKey& key) {
  return key.hex() + kBlockSuffix;
}

Status corrupt(Reason r, const std::string& what) {
  return Status::corruption(r, "session spill: " + what);
}

template <class Copy>
Sums copy_sums(const Copy& c) {
  Sums s;
  for (size_t i = 0; i < c.parts(); ++i)
    s.push_back(buffer_sums({static_cast<const std::byte*>(c.part(i)), c.part_bytes(i)}));
  return s;
}

// A block's or anchor's file name: the prefix key and the bits' sums, so equal rows of an
// equal prefix are one file and rows that differ (tainted ones) are another.
CacheKey content_key(const CacheKey& prefix, const Sums& sums) {
  std::vector<uint64_t> words = {prefix.lo, prefix.hi};
  for (const auto& s : sums) words.insert(words.end(), s.begin(), s.end());
  const XXH128_hash_t h = XXH3_128bits(words.data(), words.size() * sizeof(uint64_t));
  return CacheKey{h.low64, h.high64};
}

std::string hex64(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

std::optional<uint64_t> parse_hex64(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s.size() != 16) return std::nullopt;
  uint64_t out = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    out = out << 4 | uint64_t(d);
  }
  return out;
}

nlohmann::json sums_json(const Sums& sums) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : sums) a.push_back({hex64(s[0]), hex64(s[1])});
  return a;
}

std::optional<Sums> parse_sums(const nlohmann::json& v, size_t count) {
  if (!v.is_array() || v.size() != count) return std::nullopt;
  Sums out;
  for (const nlohmann::json& p : v) {
    if (!p.is_array() || p.size() != 2) return std::nullopt;
    auto a = parse_hex64(p[0]);
    auto b = parse_hex64(p[1]);
    if (!a || !b) return std::nullopt;
    out.push_back({*a, *b});
  }
  return out;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>> parse_pairs(const nlohmann::json& v,
                                                                    int64_t n) {
  if (!v.is_array()) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const nlohmann::json& p : v) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer())
      return std::nullopt;
    const int64_t b = p[0].get<int64_t>(), e = p[1].get<int64_t>();
    if (b < 0 || e < b || e > n) return std::nullopt;
    out.emplace_back(b, e);
  }
  return out;
}

}  // namespace

SessionSpill::SessionSpill(std::unique_ptr<BlobStore> store, std::string fingerprint,
                           const core::StateLayout& layout, int64_t granularity,
                           SessionSpillOptions options)
    : store_(std::move(store)),
      fingerprint_(std::move(fingerprint)),
      layout_(layout),
      granularity_(std::max<int64_t>(1, granularity)),
      options_(std::move(options)) {
  for (const core::TensorSpec& v : layout_.views) row_bytes_ += v.bytes_per_token();
  for (const core::TensorSpec& sec : layout_.sections) section_bytes_ += sec.bytes();
  if (options_.codec_threads > 1) pool_ = std::make_unique<SpillCodecPool>(options_.codec_threads);
}

core::Result<std::unique_ptr<SessionSpill>> SessionSpill::open(std::unique_ptr<BlobStore> store,
                                                               std::string fingerprint,
                                                               const core::StateLayout& layout,
                                                               int64_t granularity,
                                                               SessionSpillOptions options) {
  if (options.block_rows <= 0 || options.anchors < 1)
    return Status::invalid_argument("session spill: block_rows and anchors must be positive");
  std::unique_ptr<SessionSpill> s(new SessionSpill(std::move(store), std::move(fingerprint), layout,
                                                   granularity, std::move(options)));
  if (Status st = s->scan(); !st.is_ok()) return st;
  return s;
}

int64_t SessionSpill::now_s() const {
  if (options_.now_s) return options_.now_s();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool SessionSpill::exact_at(int64_t pos, int64_t taint) const {
  return pos % granularity_ == 0 && pos <= taint;
}

// An entry per session. Without a session key: the keyless entry whose every token the
// conversation still starts with (its previous save: this one replaces it), else a new id from
// the hash of all its tokens — two keyless conversations that share a head (a system prompt of
// a block or more) are two entries, not one overwriting the other.
std::string SessionSpill::entry_id(std::string_view session,
                                   std::span<const int32_t> tokens) const {
  if (!session.empty()) return "s" + std::string(session);
  const Entry* previous = nullptr;
  for (const auto& [id, e] : entries_) {
    if (!e.session.empty() || e.tokens.size() > tokens.size() ||
        !std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin()))
      continue;
    if (previous == nullptr || e.tokens.size() > previous->tokens.size()) previous = &e;
  }
  if (previous != nullptr) return previous->id;
  return "h" + hex64(XXH3_64bits(tokens.data(), tokens.size() * sizeof(int32_t)));
}

Status SessionSpill::scan() {
  auto names = store_->list();
  if (!names) return names.error();
  const int64_t now = now_s();
  for (const std::string& name : *names) {
    if (!name.ends_with(kManifestSuffix)) continue;
    auto e = read_manifest(name);
    bool missing = false;
    if (e) {
      for (const Block& b : e->blocks) missing = missing || !store_->exists(block_name(b.key));
      for (const Anchor& a : e->anchors) missing = missing || !store_->exists(anchor_name(a.key));
    }
    const bool stale = e && now - e->used_s > options_.ttl_s;
    if (!e || missing || stale) {
      if (!e) ANCHORAGE_LOG_INFO("session spill: %s", e.error().to_string().c_str());
      (void)store_->remove(name);  // an unreadable manifest is swept (the open goes on)
      ++(stale ? counts_.evictions : counts_.swept_files);
      continue;
    }
    const std::string id = e->id;
    entries_[id] = std::move(*e);
  }
  for (auto& [id, e] : entries_) {
    e.bytes = 0;
    auto count = [&](const std::string& name) {
      if (file_refs_[name]++ == 0) {
        auto size = store_->size(name);
        file_bytes_[name] = size ? *size : 0;
      }
      e.bytes += int64_t(file_bytes_[name]);
    };
    for (const Block& b : e.blocks) count(block_name(b.key));
    for (const Anchor& a : e.anchors) count(anchor_name(a.key));
    auto m = store_->size(id + kManifestSuffix);
    e.bytes += m ? int64_t(*m) : 0;
  }
  remove_unlisted(*names);
  evict("");
  return Status::ok();
}

// Blocks and anchors no manifest lists: a save a crash interrupted, or an entry's leftovers.
void SessionSpill::remove_unlisted(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name.ends_with(kManifestSuffix)) continue;
    CacheKey key;
    bool is_anchor = false;
    const bool ours = parse_blob_name(name, &key, &is_anchor) ||
                      (name.ends_with(kBlockSuffix) &&
                       CacheKey::from_hex(name.substr(0, name.size() - 6)).has_value());
    if (ours && file_refs_.count(name) != 0) continue;
    if (ours || name.ends_with(".tmp")) {
      (void)store_->remove(name);  // best effort: a stray kept is swept at the next open
      ++counts_.swept_files;
    }
  }
}

core::Result<SessionSpill::Entry> SessionSpill::read_manifest(const std::string& name) {
  auto file = store_->open(name);
  if (!file) return file.error();
  auto f = CacheFile::open(std::move(*file), CacheFileKind::kSpillManifest);
  if (!f) return f.error();
  const nlohmann::json& m = f->meta();
  auto bad = [](const char* what) { return corrupt(Reason::kLengthRange, what); };
  if (!m.contains("fingerprint") || !m["fingerprint"].is_string())
    return bad("a manifest without a fingerprint");
  if (m["fingerprint"].get<std::string>() != fingerprint_)
    return corrupt(Reason::kFingerprint, "another engine's entry");
  Entry e;
  auto str = [&](const char* k, std::string* out) {
    if (!m.contains(k) || !m[k].is_string()) return false;
    *out = m[k].get<std::string>();
    return true;
  };
  auto i64 = [&](const char* k, int64_t* out) {
    if (!m.contains(k) || !m[k].is_number_integer()) return false;
    *out = m[k].get<int64_t>();
    return true;
  };
  int64_t n = 0, taint = -1;
  if (!str("entry", &e.id) || !str("session", &e.session) || !i64("tokens", &n) ||
      !i64("taint", &taint) || !i64("saved", &e.saved_s) || !i64("used", &e.used_s) ||
      !m.contains("resident") || !m["resident"].is_boolean() || n <= 0 ||
      e.id + kManifestSuffix != name)
    return bad("a manifest's fields are malformed");
  e.resident = m["resident"].get<bool>();
  e.taint = taint < 0 ? INT64_MAX : taint;
  if (f->sections().size() != 1 || f->sections()[0].name != "tokens" ||
      f->sections()[0].dtype != "i32" || f->sections()[0].length != uint64_t(n) * 4)
    return corrupt(Reason::kLayout, "a manifest's token section");
  std::vector<std::byte> raw(size_t(n) * 4);
  if (Status s = f->read_section(0, raw); !s.is_ok()) return s;
  e.tokens.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    e.tokens[size_t(i)] = int32_t(core::get_u32le(raw.data() + 4 * i));
  auto hidden = parse_pairs(m.value("hidden", nlohmann::json()), n);
  auto regions = parse_pairs(m.value("regions", nlohmann::json()), n);
  if (!hidden || !regions) return bad("a manifest's spans are malformed");
  for (auto [b, x] : *hidden) e.hidden.push_back({b, x});
  e.regions = *regions;
  if (!m.contains("blocks") || !m["blocks"].is_array() || !m.contains("anchors") ||
      !m["anchors"].is_array() || m["anchors"].empty())
    return bad("a manifest's lists are malformed");
  if (Status s = parse_manifest_blocks(m["blocks"], n, &e); !s.is_ok()) return s;
  if (Status s = parse_manifest_anchors(m["anchors"], n, &e); !s.is_ok()) return s;
  return e;
}

// The manifest's blocks: keys, sums per view, and rows that cover [0, n) in order.
Status SessionSpill::parse_manifest_blocks(const nlohmann::json& blocks, int64_t n,
                                           Entry* e) const {
  auto bad = [](const char* what) { return corrupt(Reason::kLengthRange, what); };
  int64_t at = 0;
  for (const nlohmann::json& b : blocks) {
    Block blk;
    auto key = b.contains("key") && b["key"].is_string()
                   ? CacheKey::from_hex(b["key"].get<std::string>())
                   : std::nullopt;
    auto sums = b.contains("sums") ? parse_sums(b["sums"], layout_.views.size()) : std::nullopt;
    if (!key || !sums || !b.contains("end") || !b["end"].is_number_integer())
      return bad("a manifest's block is malformed");
    blk.key = *key;
    blk.sums = std::move(*sums);
    blk.begin = at;
    blk.end = b["end"].get<int64_t>();
    if (blk.end <= blk.begin || blk.end > n) return bad("a manifest's block rows");
    at = blk.end;
    e->blocks.push_back(std::move(blk));
  }
  if (at != n) return bad("a manifest's blocks do not cover its tokens");
  return Status::ok();
}

// The manifest's anchors: ascending, each at a block's end (it shares that block's key), the
// last at the entry's end.
Status SessionSpill::parse_manifest_anchors(const nlohmann::json& anchors, int64_t n,
                                            Entry* e) const {
  auto bad = [](const char* what) { return corrupt(Reason::kLengthRange, what); };
  int64_t last = 0;
  for (const nlohmann::json& a : anchors) {
    Anchor anc;
    auto sums = a.contains("sums") ? parse_sums(a["sums"], layout_.sections.size()) : std::nullopt;
    if (!sums || !a.contains("position") || !a["position"].is_number_integer())
      return bad("a manifest's anchor is malformed");
    anc.position = a["position"].get<int64_t>();
    anc.sums = std::move(*sums);
    auto blk = std::find_if(e->blocks.begin(), e->blocks.end(),
                            [&](const Block& b) { return b.end == anc.position; });
    if (anc.position <= last || blk == e->blocks.end())
      return bad("a manifest's anchor is not at a block's end");
    anc.key = blk->key;
    last = anc.position;
    e->anchors.push_back(std::move(anc));
  }
  if (last != n) return bad("a manifest's last anchor is not at its end");
  return Status::ok();
}

Status SessionSpill::put_manifest(const Entry& e) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const Block& b : e.blocks)
    blocks.push_back({{"key", b.key.hex()}, {"end", b.end}, {"sums", sums_json(b.sums)}});
  nlohmann::json anchors = nlohmann::json::array();
  for (const Anchor& a : e.anchors)
    anchors.push_back({{"position", a.position}, {"sums", sums_json(a.sums)}});
  nlohmann::json hidden = nlohmann::json::array();
  for (const HiddenSpan& h : e.hidden) hidden.push_back({h.begin, h.end});
  nlohmann::json regions = nlohmann::json::array();
  for (auto [b, x] : e.regions) regions.push_back({b, x});
  nlohmann::json meta = {{"fingerprint", fingerprint_},
                         {"entry", e.id},
                         {"session", e.session},
                         {"tokens", int64_t(e.tokens.size())},
                         {"taint", e.taint == INT64_MAX ? int64_t(-1) : e.taint},
                         {"resident", e.resident},
                         {"saved", e.saved_s},
                         {"used", e.used_s},
                         {"hidden", hidden},
                         {"regions", regions},
                         {"blocks", blocks},
                         {"anchors", anchors}};
  std::vector<std::byte> raw(e.tokens.size() * 4);
  for (size_t i = 0; i < e.tokens.size(); ++i)
    core::put_u32le(raw.data() + 4 * i, uint32_t(e.tokens[i]));
  CacheFileWriter w(CacheFileKind::kSpillManifest, prefix_key(fingerprint_, e.tokens),
                    std::move(meta));
  w.add_section("tokens", "i32", {int64_t(e.tokens.size())}, raw);
  return store_->put(e.id + kManifestSuffix, w.parts());
}

Status SessionSpill::save(engine::Engine& engine, const SpillConversation& conv, SpillWrite kind) {
  const int64_t n = int64_t(conv.tokens.size());
  if (n <= 0 || conv.end == nullptr || conv.end->position() != n || n > engine.capacity())
    return Status::invalid_argument("session spill: a conversation needs its end anchor");
  if (options_.guard && !options_.guard->allow_spill(kind, n)) {
    ++counts_.save_skips;
    return Status::ok();
  }
  Entry e = new_entry(conv);
  SaveWrites w;
  if (Status s = write_files(engine, conv, &e, &w); !s.is_ok()) return fail_save(&w, s);
  if (Status s = put_manifest(e); !s.is_ok()) return fail_save(&w, s);
  {
    auto size = store_->size(e.id + kManifestSuffix);
    w.written += size ? int64_t(*size) : 0;
    e.bytes = size ? int64_t(*size) : 0;
  }
  if (options_.guard) options_.guard->add(WriteSource::kSpill, w.written);
  counts_.bytes_written += w.written;
  ++counts_.saves;
  commit_entry(std::move(e), w.names);
  return Status::ok();
}

SessionSpill::Entry SessionSpill::new_entry(const SpillConversation& conv) const {
  Entry e;
  e.id = entry_id(conv.session, conv.tokens);
  e.session = conv.session;
  e.tokens.assign(conv.tokens.begin(), conv.tokens.end());
  e.taint = conv.taint;
  e.hidden = conv.hidden;
  e.regions = conv.regions;
  e.resident = conv.resident;
  e.saved_s = e.used_s = now_s();
  return e;
}

// The anchors kept: the end, and the newest others below it — at block lines or not: the end
// of the last prefill (where the next turn parts from the rows when the client sends another
// answer than the one generated) is rarely on one. A block ends at every kept anchor.
std::map<int64_t, const SectionCopy*> SessionSpill::kept_anchors(
    const SpillConversation& conv) const {
  const int64_t n = int64_t(conv.tokens.size());
  std::map<int64_t, const SectionCopy*> keep;
  for (const SectionCopy* a : conv.anchors)
    if (a != nullptr && !a->empty() && a->position() > 0 && a->position() < n)
      keep[a->position()] = a;
  while (int(keep.size()) > options_.anchors - 1) keep.erase(keep.begin());
  keep[n] = conv.end;
  return keep;
}

// Every block and kept anchor of the entry, bottom up; a file already in place is not written
// again. The entry's blocks and anchors are filled on the way.
Status SessionSpill::write_files(engine::Engine& engine, const SpillConversation& conv, Entry* e,
                                 SaveWrites* w) {
  const int64_t n = int64_t(conv.tokens.size());
  const int64_t B = options_.block_rows;
  const std::map<int64_t, const SectionCopy*> keep = kept_anchors(conv);
  PrefixHasher hasher(fingerprint_);
  CacheKey prev;
  std::vector<CacheKey> below;
  for (int64_t b = 0, end = 0; b < n; b = end) {
    end = std::min((b / B + 1) * B, keep.upper_bound(b)->first);  // keep ends at n
    core::Result<RowCopy> got =
        conv.rows ? conv.rows(b, end) : core::Result<RowCopy>(RowCopy::capture(engine, b, end));
    if (!got) return got.error();
    hasher.feed(conv.tokens.subspan(size_t(b), size_t(end - b)));
    Block blk{CacheKey{}, b, end, copy_sums(*got)};
    blk.key = content_key(hasher.key(), blk.sums);
    if (Status s = save_block(blk, prev, conv.tokens.subspan(size_t(b), size_t(end - b)),
                              std::move(*got), w);
        !s.is_ok())
      return s;
    prev = blk.key;
    below.push_back(blk.key);
    if (auto it = keep.find(end); it != keep.end()) {
      Anchor anc{blk.key, end, copy_sums(*it->second)};
      if (Status s = save_anchor(anc, below, *it->second, e->saved_s, w); !s.is_ok()) return s;
      e->anchors.push_back(std::move(anc));
    }
    e->blocks.push_back(std::move(blk));
  }
  return write_pending(w);
}

// One block: kept when its file is in place, else compressed while the one before it is
// written (options_.pipelined_writes), or written at once.
Status SessionSpill::save_block(const Block& blk, const CacheKey& prev,
                                std::span<const int32_t> ids, RowCopy rows, SaveWrites* w) {
  const std::string name = block_name(blk.key);
  w->names.push_back(name);
  if (file_refs_.count(name) != 0 || store_->exists(name)) {
    ++counts_.blocks_kept;
    return Status::ok();
  }
  auto p = std::make_unique<PendingBlock>();
  p->block = blk;
  p->prev = prev;
  p->ids = ids;
  p->rows = std::move(rows);
  encode_block(*p);
  // Block i is written while block i + 1 (this one) is compressed.
  if (Status s = write_pending(w); !s.is_ok()) return s;
  w->pending = std::move(p);
  return options_.pipelined_writes ? Status::ok() : write_pending(w);
}

// An anchor is named by its rows; another entry's file there is kept only when its sections'
// sums are these (else it is rewritten: that entry then fails its check).
Status SessionSpill::save_anchor(const Anchor& anc, const std::vector<CacheKey>& below,
                                 const SectionCopy& sections, int64_t saved_s, SaveWrites* w) {
  const std::string name = anchor_name(anc.key);
  w->names.push_back(name);
  if (file_refs_.count(name) != 0 && known_anchor_sums(anc.key) == anc.sums) {
    ++counts_.blocks_kept;
    return Status::ok();
  }
  AnchorInfo info{anc.key, anc.position, below, saved_s, 0};
  if (Status s = put_anchor(*store_, fingerprint_, info, sections, layout_); !s.is_ok()) return s;
  note_write(name, w);
  return Status::ok();
}

Status SessionSpill::write_pending(SaveWrites* w) {
  if (!w->pending) return Status::ok();
  std::unique_ptr<PendingBlock> p = std::move(w->pending);
  if (Status s = write_block(*p); !s.is_ok()) return s;
  note_write(block_name(p->block.key), w);
  return Status::ok();
}

void SessionSpill::note_write(const std::string& name, SaveWrites* w) {
  auto size = store_->size(name);
  file_bytes_[name] = size ? *size : 0;
  w->written += int64_t(file_bytes_[name]);
  ++counts_.blocks_written;
}

Status SessionSpill::fail_save(SaveWrites* w, const Status& s) {
  w->pending.reset();  // waits for its frames
  ++counts_.write_errors;
  if (options_.guard) options_.guard->add(WriteSource::kSpill, w->written);
  return s;
}

// The new manifest is in place: the entry replaces its older self, whose files only it listed
// go; then the spill evicts down to its budget.
void SessionSpill::commit_entry(Entry e, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    ++file_refs_[name];
    e.bytes += int64_t(file_bytes_[name]);
  }
  if (e.resident)  // one resident entry: the newest drain's
    for (auto& [id, other] : entries_) other.resident = false;
  const std::string id = e.id;
  auto old = entries_.find(id);
  if (old == entries_.end()) {
    entries_[id] = std::move(e);
    evict(id);
    return;
  }
  Entry prev_entry = std::move(old->second);
  entries_.erase(old);
  entries_[id] = std::move(e);
  auto release = [&](const std::string& name) {
    if (--file_refs_[name] > 0) return;
    file_refs_.erase(name);
    file_bytes_.erase(name);
    (void)store_->remove(name);  // a file left behind is swept at the next open
  };
  for (const Block& b : prev_entry.blocks) release(block_name(b.key));
  for (const Anchor& a : prev_entry.anchors) release(anchor_name(a.key));
  evict(id);
}

std::optional<std::vector<std::array<uint64_t, 2>>> SessionSpill::known_anchor_sums(
    const CacheKey& key) const {
  for (const auto& [id, e] : entries_)
    for (const Anchor& a : e.anchors)
      if (a.key == key) return a.sums;
  return std::nullopt;
}

SessionSpill::PendingBlock::~PendingBlock() {
  for (auto& f : encoding)
    if (f.valid()) f.wait();  // the pool writes into `frames` until then
}

// Starts compressing the block's views: on the codec pool, returning at once (the caller
// writes the block before it meanwhile); without a pool, here.
void SessionSpill::encode_block(PendingBlock& p) {
  p.frames.resize(layout_.views.size());
  for (size_t i = 0; i < p.frames.size(); ++i) {
    const size_t elem = size_t(core::dtype_size(layout_.views[i].dtype));
    const auto* data = static_cast<const uint8_t*>(p.rows.part(i));
    if (pool_) {
      p.encoding.push_back(
          pool_->encode_async(options_.codec, data, p.rows.part_bytes(i), elem, &p.frames[i]));
    } else if (p.encoded.is_ok()) {
      p.encoded = spill_encode(options_.codec, data, p.rows.part_bytes(i), elem, p.frames[i]);
    }
  }
}

// A block file: the disk tier's cache file format, kind 6, with the chunk's fields and the
// codec's name in the metadata, and one section per view holding that view's packed rows as
// one spill codec frame (docs/formats/disk-tier.md "spill block"). Waits for the frames first.
Status SessionSpill::write_block(PendingBlock& p) {
  Status encoded = p.encoded;
  for (auto& f : p.encoding) {
    Status s = f.get();
    if (encoded.is_ok()) encoded = s;
  }
  p.encoding.clear();
  if (!encoded.is_ok()) return encoded;
  const Block& b = p.block;
  const CacheKey& prev = p.prev;
  const std::span<const int32_t> ids = p.ids;
  const std::vector<std::vector<uint8_t>>& frames = p.frames;
  nlohmann::json meta = {{"fingerprint", fingerprint_},
                         {"begin", b.begin},
                         {"end", b.end},
                         {"prev", prev.is_zero() ? std::string() : prev.hex()},
                         {"codec", spill_codec_name(options_.codec)},
                         {"tokens", std::vector<int32_t>(ids.begin(), ids.end())}};
  CacheFileWriter w(CacheFileKind::kSpillBlock, b.key, std::move(meta));
  for (size_t i = 0; i < frames.size(); ++i)
    w.add_section(layout_.views[i].name, "u8", {int64_t(frames[i].size())},
                  {reinterpret_cast<const std::byte*>(frames[i].data()), frames[i].size()});
  return store_->put(block_name(b.key), w.parts());
}

// Reads a block file's sections into `frame` (grown as needed) in one read, after checking
// the header's facts against the manifest's and the token ids against `ids`. The sections'
// crcs are checked by decode_frames, on the thread that uses the bytes.
core::Result<SessionSpill::BlockFrames> SessionSpill::read_frames(
    const Block& b, std::span<const int32_t> ids, core::AlignedBuffer* frame) const {
  auto file = store_->open(block_name(b.key));
  if (!file) return file.error();
  auto f = CacheFile::open(std::move(*file), CacheFileKind::kSpillBlock);
  if (!f) return f.error();
  const nlohmann::json& m = f->meta();
  if (!m.contains("fingerprint") || m["fingerprint"] != fingerprint_)
    return corrupt(Reason::kFingerprint, "a block of another engine");
  if (!m.contains("begin") || m["begin"] != b.begin || !m.contains("end") || m["end"] != b.end ||
      !m.contains("tokens") || !m["tokens"].is_array() || m["tokens"].size() != ids.size() ||
      !m.contains("codec") || !m["codec"].is_string())
    return corrupt(Reason::kLayout, "a block's header differs from its manifest");
  // One lookup of the array, not one per token (they were a fifth of a block's read time).
  const nlohmann::json& tokens = m["tokens"];
  for (size_t i = 0; i < ids.size(); ++i)
    if (!tokens[i].is_number_integer() || tokens[i].get<int64_t>() != ids[i])
      return corrupt(Reason::kLayout, "a block's token ids differ");
  auto kind = parse_spill_codec(m["codec"].get<std::string>());
  if (!kind) return corrupt(Reason::kLayout, "a block's codec is unknown");
  const auto& secs = f->sections();
  if (secs.size() != layout_.views.size())
    return corrupt(Reason::kLayout, "a block's section count differs");
  BlockFrames out;
  out.kind = *kind;
  for (size_t i = 0; i < secs.size(); ++i) {
    if (secs[i].name != layout_.views[i].name || secs[i].dtype != "u8")
      return corrupt(Reason::kLayout, "a block's section differs from " + layout_.views[i].name);
    out.sections.push_back({size_t(f->section_offset(i)), size_t(secs[i].length)});
  }
  // One read of whole blocks straight into a 4 KiB-aligned buffer kept across blocks: under
  // O_DIRECT no bounce copy and no freshly faulted pages (a std::vector read a section at a
  // time ran at half the drive's rate).
  const size_t room = size_t(f->sections_bytes());
  if (frame->size() < room)
    *frame = core::AlignedBuffer(room, core::AlignedBuffer::Pages::kSmall,
                                 core::AlignedBuffer::Fill::kNone);
  if (Status s = f->read_sections_unchecked({frame->as<std::byte>(), room}); !s.is_ok()) return s;
  out.file.emplace(std::move(*f));
  return out;
}

namespace {
// f() on one of the pool's threads; its result through the future.
template <class F>
auto run_on(SpillCodecPool& pool, F f) -> std::future<decltype(f())> {
  auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
  std::future<decltype(f())> result = task->get_future();
  pool.submit([task] { (*task)(); });
  return result;
}

// Runs f(i) for every i in [0, n) on the codec pool's threads and this one; returns when all
// have run. f must not wait on the pool itself.
void for_each_on(SpillCodecPool* pool, size_t n, const std::function<void(size_t)>& f) {
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) f(i);
  };
  const size_t helpers = pool == nullptr || n < 2 ? 0 : std::min(size_t(pool->n_threads()), n - 1);
  std::latch done(std::ptrdiff_t(helpers + 1));
  for (size_t h = 0; h < helpers; ++h)
    pool->submit([&] {
      drain();
      done.count_down();
    });
  drain();
  done.arrive_and_wait();
}
}  // namespace

// Each view's frame, apart on the codec pool's threads and this one: its crc checked, decoded
// into exactly its view's bytes, summed again against the manifest and, with `into`, its rows
// [a, b) copied into the engine. A block's views are separate frames of a few hundred KB, each
// one codec segment: decoded one after the other, one thread did the work while the others
// waited. A view is copied in before the block's other views are checked: a failed restore
// resets the engine, so rows of a block refused later are never used.
//
// A raw frame going into the engine (kind none, or a block coding did not shrink) is not copied
// out first: its bytes are summed piece by piece as the crc reads them, while they are in the
// core's cache, and copied into the engine from where they were read. The copy, the sums' own
// pass and the crc's had each read the whole block from memory (the restore's CPU time).
Status SessionSpill::decode_frames(const Block& b, const BlockFrames& frames,
                                   const core::AlignedBuffer& frame, RowCopy* rows,
                                   const WriteBack* into) const {
  const size_t n = frames.sections.size();
  if (b.sums.size() != n) return corrupt(Reason::kLayout, "a block's sums differ in count");
  const std::span<const std::byte> room(frame.as<std::byte>(), frame.size());
  std::vector<Status> status(n);
  for_each_on(pool_.get(), n, [&](size_t i) {
    const auto [offset, length] = frames.sections[i];
    const uint8_t* in = frame.as<uint8_t>() + offset;
    const size_t bytes = rows->part_bytes(i);
    const size_t elem = size_t(core::dtype_size(layout_.views[i].dtype));
    // The header alone says whether the frame is raw; the crc below vouches for it.
    core::Result<const uint8_t*> raw = spill_raw_bytes(frames.kind, in, length, bytes, elem);
    Status s;
    if (raw && *raw != nullptr && into != nullptr) {
      BufferSums sums;
      const uint64_t first = uint64_t(*raw - in), last = first + bytes;
      s = frames.file->check_section(i, room, [&](uint64_t at, std::span<const std::byte> piece) {
        const uint64_t lo = std::max(at, first), hi = std::min(at + piece.size(), last);
        if (lo < hi) sums.add(piece.subspan(size_t(lo - at), size_t(hi - lo)));
      });
      if (s.is_ok() && sums.value() != b.sums[i])
        s = corrupt(Reason::kSectionCrc, "a block's sums differ");
      if (s.is_ok())
        s = RowCopy::write_back_packed(*into->engine, i,
                                       {reinterpret_cast<const std::byte*>(*raw), bytes}, b.begin,
                                       b.end, into->a, into->b);
      status[i] = std::move(s);
      return;
    }
    s = frames.file->check_section(i, room);
    auto* out = static_cast<uint8_t*>(rows->mutable_part(i));
    if (s.is_ok()) s = spill_decode(frames.kind, in, length, out, bytes, elem);
    if (s.is_ok() && buffer_sums({reinterpret_cast<const std::byte*>(out), bytes}) != b.sums[i])
      s = corrupt(Reason::kSectionCrc, "a block's sums differ");
    // Into the engine while the view's rows are still in this core's cache.
    if (s.is_ok() && into != nullptr) s = rows->write_back_view(*into->engine, i, into->a, into->b);
    status[i] = std::move(s);
  });
  for (Status& s : status)
    if (!s.is_ok()) return s;
  return Status::ok();
}

void SessionSpill::drop_entry(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  // The manifest first: a crash after it leaves only unlisted files, swept at open.
  (void)store_->remove(id + kManifestSuffix);
  auto release = [&](const std::string& name) {
    if (--file_refs_[name] > 0) return;
    file_refs_.erase(name);
    file_bytes_.erase(name);
    (void)store_->remove(name);
  };
  for (const Block& b : it->second.blocks) release(block_name(b.key));
  for (const Anchor& a : it->second.anchors) release(anchor_name(a.key));
  entries_.erase(it);
}

// Least recently used first, until the entries fit the budget; `keep` (the one just saved)
// stays even alone over it.
void SessionSpill::evict(const std::string& keep) {
  auto total = [&] {
    int64_t t = 0;
    for (const auto& [name, b] : file_bytes_) t += int64_t(b);
    for (const auto& [id, e] : entries_) t += int64_t(e.tokens.size()) * 4;  // ~manifests
    return t;
  };
  while (total() > options_.budget_bytes) {
    const Entry* oldest = nullptr;
    for (const auto& [id, e] : entries_)
      if (id != keep && (oldest == nullptr || e.used_s < oldest->used_s)) oldest = &e;
    if (oldest == nullptr) break;
    ++counts_.evictions;
    drop_entry(oldest->id);
  }
}

double SessionSpill::read_ms(int64_t bytes) const {
  const double rate = read_bytes_per_s_ > 0 ? read_bytes_per_s_ : options_.prior_read_bytes_per_s;
  return 1e3 * double(bytes) / rate;
}

ResumeOffer SessionSpill::offer(std::span<const int32_t> prompt, std::string_view) const {
  ResumeOffer best;
  const int64_t m = int64_t(prompt.size());
  if (m < 2) return best;
  for (const auto& [id, e] : entries_) {
    const int64_t c = std::min(common_prefix(e.tokens, prompt), m - 1);
    for (auto a = e.anchors.rbegin(); a != e.anchors.rend(); ++a) {
      if (a->position > c) continue;
      if (a->position > best.resume_at) {
        const int64_t bytes = a->position * row_bytes_ + section_bytes_;
        best = ResumeOffer{a->position, ResumeSource::kSpill, bytes, a->position,
                           exact_at(a->position, e.taint)};
        best.restore_ms = read_ms(bytes);
      }
      break;
    }
  }
  return best;
}

void SessionSpill::note_unused(std::span<const int32_t> prompt, const ResumeOffer& mine,
                               const ResumeOffer& chosen, int64_t aligned_end) {
  const int64_t m = int64_t(prompt.size());
  if (m < 2) return;
  int64_t shared = 0;  // the furthest any entry goes into the prompt (one token left)
  for (const auto& [id, e] : entries_)
    shared = std::max(shared, std::min(common_prefix(e.tokens, prompt), m - 1));
  const int64_t start = std::max<int64_t>(chosen.resume_at, 0);
  const char* why = "short";
  int64_t* count = &counts_.unused_short;
  if (aligned_end > shared && aligned_end - start >= options_.block_rows) {
    // Only the end alignment would go there; even a start from the spill stops below it.
    why = "end_no_align";
    count = &counts_.unused_end_no_align;
    shared = aligned_end;
  } else if (chosen.source == ResumeSource::kSpill || shared <= start ||
             shared < options_.block_rows) {
    return;
  } else if (mine.useful() && mine.resume_at > start) {
    why = "slow";
    count = &counts_.unused_slow;
  } else if (shared - start >= options_.block_rows) {
    why = "anchors_below";
    count = &counts_.unused_anchors_below;
  }
  ++*count;
  ANCHORAGE_LOG_INFO(
      "session spill: unused (%s): an entry holds %lld of the prompt's %lld tokens, the spill "
      "offered %lld (%.0f ms read), the start is %lld",
      why, (long long)shared, (long long)m, (long long)(mine.useful() ? mine.resume_at : 0),
      mine.restore_ms, (long long)start);
}

Status SessionSpill::restore(engine::Engine& engine, std::span<const int32_t> prompt,
                             const ResumeOffer& offer, int64_t rows_in_place) {
  const int64_t p = offer.resume_at;
  if (offer.source != ResumeSource::kSpill || p <= 0 || p >= int64_t(prompt.size()) ||
      p > engine.capacity())
    return Status::invalid_argument("session spill: not a spill offer for this prompt");
  Entry* e = offered_entry(prompt, p);
  if (e == nullptr) return Status::not_found("session spill: the offered entry is gone");
  return restore_entry(engine, *e, p, rows_in_place);
}

// The entry whose tokens up to `position` are the prompt's and that keeps an anchor there.
SessionSpill::Entry* SessionSpill::offered_entry(std::span<const int32_t> prompt,
                                                 int64_t position) {
  for (auto& [id, e] : entries_) {
    if (int64_t(e.tokens.size()) < position || int64_t(prompt.size()) < position ||
        !std::equal(e.tokens.begin(), e.tokens.begin() + position, prompt.begin()))
      continue;
    if (std::any_of(e.anchors.begin(), e.anchors.end(),
                    [&](const Anchor& a) { return a.position == position; }))
      return &e;
  }
  return nullptr;
}

Status SessionSpill::refuse_entry(const std::string& id, const Status& why) {
  ++counts_.restore_failures;
  ANCHORAGE_LOG_INFO("session spill: entry %s dropped: %s", id.c_str(), why.to_string().c_str());
  drop_entry(id);
  return why;
}

core::Result<SectionCopy> SessionSpill::read_checked_anchor(const Anchor& a, int64_t* read) const {
  // Every byte comes from the file (or the copy is thrown away): no zeroing.
  SectionCopy sections =
      SectionCopy::allocate(layout_, a.position, core::AlignedBuffer::Fill::kNone);
  auto file = store_->open(anchor_name(a.key));
  if (!file) return file.error();
  auto f = CacheFile::open(std::move(*file), CacheFileKind::kAnchor);
  if (!f) return f.error();
  auto info = anchor_info(*f, fingerprint_, layout_);
  if (!info) return info.error();
  if (info->position != a.position) return corrupt(Reason::kLayout, "an anchor moved");
  if (Status s = read_anchor_sections(*f, &sections); !s.is_ok()) return s;
  if (copy_sums(sections) != a.sums) return corrupt(Reason::kSectionCrc, "an anchor's sums differ");
  *read += int64_t(f->file_bytes());
  return sections;
}

SessionSpill::LoadedBlock SessionSpill::load_block(const Entry& e, const Block& b,
                                                   core::AlignedBuffer* frame) const {
  LoadedBlock out;
  auto frames = read_frames(b, block_ids(e, b), frame);
  if (!frames) {
    out.status = frames.error();
    return out;
  }
  out.rows = RowCopy::allocate(layout_, b.begin, b.end, core::AlignedBuffer::Fill::kNone);
  out.status = decode_frames(b, *frames, *frame, &out.rows);
  return out;
}

// A read done: counted, the measured rate updated, and the entry used now (the TTL and the
// least-recently-used order count from here, across restarts).
void SessionSpill::note_read(const Entry& e, int64_t bytes, int64_t t0_ns) {
  const double secs = double(core::now_ns() - t0_ns) * 1e-9;
  counts_.read_bytes += bytes;
  if (bytes >= (int64_t(8) << 20) && secs > 0) {
    const double rate = double(bytes) / secs;
    read_bytes_per_s_ = read_bytes_per_s_ > 0 ? 0.5 * (read_bytes_per_s_ + rate) : rate;
  }
  Entry& used = entries_.at(e.id);
  used.used_s = now_s();
  (void)put_manifest(used);  // a failed rewrite only ages the entry
}

Status SessionSpill::restore_entry(engine::Engine& engine, Entry& e, int64_t p,
                                   int64_t rows_in_place) {
  const int64_t t0 = core::now_ns();
  int64_t read = 0;
  const std::string id = e.id;
  const Anchor& anc = *std::find_if(e.anchors.begin(), e.anchors.end(),
                                    [&](const Anchor& a) { return a.position == p; });
  // Every block above the rows in place.
  std::vector<const Block*> wanted;
  for (const Block& b : e.blocks) {
    if (b.begin >= p) break;
    if (b.end <= rows_in_place) {
      ++counts_.blocks_in_place;
      continue;
    }
    wanted.push_back(&b);
  }
  // The reader thread reads block i + 1 while block i is decoded, summed and copied into the
  // views here: the drive and the CPU work at once. The anchor is read (and checked) after the
  // last block, while that block is decoded; it is written into the engine last. A second
  // reader for the anchor beside the blocks gained nothing: the kernel ran both readers on one
  // core, one after the other, and the first block waited for the whole anchor.
  auto& frames = read_frames_;
  auto fetch = [&](size_t i) {
    return run_on(*reader_, [&, i] {
      return read_frames(*wanted[i], block_ids(e, *wanted[i]), &frames[i % 2]);
    });
  };
  int64_t anchor_read = 0;
  std::future<core::Result<SectionCopy>> anchor;
  auto fetch_anchor = [&] {
    anchor = run_on(*reader_, [&] { return read_checked_anchor(anc, &anchor_read); });
  };
  std::future<core::Result<BlockFrames>> next;
  if (wanted.empty())
    fetch_anchor();
  else
    next = fetch(0);
  for (size_t i = 0; i < wanted.size(); ++i) {
    core::Result<BlockFrames> cur = next.get();
    if (i + 1 < wanted.size())
      next = fetch(i + 1);
    else
      fetch_anchor();
    const Block& b = *wanted[i];
    Status checked = cur ? Status::ok() : cur.error();
    const WriteBack into{&engine, std::max(b.begin, rows_in_place), std::min(b.end, p)};
    if (checked.is_ok()) {
      RowCopy rows = RowCopy::allocate(layout_, b.begin, b.end, core::AlignedBuffer::Fill::kNone);
      checked = decode_frames(b, *cur, frames[i % 2], &rows, &into);
    }
    if (!checked.is_ok()) {
      // The reads finish before the refusal deletes files.
      if (next.valid()) next.wait();
      if (anchor.valid()) anchor.wait();
      return refuse_entry(id, checked);
    }
    auto size = file_bytes_.find(block_name(b.key));
    read += size == file_bytes_.end() ? 0 : int64_t(size->second);
    ++counts_.blocks_read;
  }
  auto sections = anchor.get();
  if (!sections) return refuse_entry(id, sections.error());
  read += anchor_read;
  if (Status s = sections->write_back(engine); !s.is_ok()) return s;
  if (Status s = engine.resume_at(p); !s.is_ok()) return s;
  ++counts_.hits;
  counts_.hit_tokens += p;
  note_read(e, read, t0);
  return Status::ok();
}

int64_t SessionSpill::held_for_prewarm(const Entry& e, int64_t rows_in_place) const {
  int64_t held = section_bytes_;
  for (const Block& b : e.blocks)
    if (b.end > rows_in_place) held += (b.end - b.begin) * row_bytes_;
  return held;
}

core::Result<int64_t> SessionSpill::prewarm_bytes(std::span<const int32_t> prompt,
                                                  const ResumeOffer& offer, int64_t rows_in_place) {
  const Entry* e = offer.source == ResumeSource::kSpill && offer.resume_at > 0
                       ? offered_entry(prompt, offer.resume_at)
                       : nullptr;
  if (e == nullptr) return Status::not_found("session spill: the offered entry is gone");
  return held_for_prewarm(*e, std::min(rows_in_place, common_prefix(e->tokens, prompt)));
}

core::Result<SessionSpill::Restored> SessionSpill::prewarm(
    engine::Engine& engine, std::span<const int32_t> prompt, const ResumeOffer& offer,
    int64_t rows_in_place, const std::function<bool()>& yield,
    const std::function<Status(int64_t)>& reserve) {
  if (offer.source != ResumeSource::kSpill || offer.resume_at <= 0)
    return Status::invalid_argument("session spill: not a spill offer");
  Entry* found = offered_entry(prompt, offer.resume_at);
  if (found == nullptr) return Status::not_found("session spill: the offered entry is gone");
  const Entry& e = *found;
  const std::string id = e.id;
  const int64_t n = int64_t(e.tokens.size());
  if (n > engine.capacity()) return Status::invalid_argument("session spill: too long");
  // The rows in place are the prompt's; the entry's only as far as its tokens are the prompt's.
  rows_in_place = std::min(rows_in_place, common_prefix(e.tokens, prompt));
  if (reserve) {
    if (Status s = reserve(held_for_prewarm(e, rows_in_place)); !s.is_ok()) return s;
  }
  const int64_t t0 = core::now_ns();
  int64_t read = 0;
  auto sections = read_checked_anchor(e.anchors.back(), &read);
  if (!sections) return refuse_entry(id, sections.error());
  // Every block read and checked first, the engine written last: a request that arrives
  // finds the rows in place as they were.
  std::vector<std::pair<const Block*, RowCopy>> loaded;
  core::AlignedBuffer frame;
  int64_t in_place = 0;
  for (const Block& b : e.blocks) {
    if (b.end <= rows_in_place) {
      ++in_place;
      continue;
    }
    if (yield && yield()) {
      ++counts_.prewarm_yields;
      return Status::cancelled("session spill: a request arrived during the prewarm");
    }
    LoadedBlock l = load_block(e, b, &frame);
    if (!l.status.is_ok()) return refuse_entry(id, l.status);
    auto size = file_bytes_.find(block_name(b.key));
    read += size == file_bytes_.end() ? 0 : int64_t(size->second);
    loaded.emplace_back(&b, std::move(l.rows));
  }
  for (const auto& [b, rows] : loaded)
    if (Status s = rows.write_back(engine, std::max(b->begin, rows_in_place), b->end); !s.is_ok())
      return s;
  if (Status s = sections->write_back(engine); !s.is_ok()) return s;
  if (Status s = engine.resume_at(n); !s.is_ok()) return s;
  ++counts_.prewarms;
  counts_.blocks_in_place += in_place;
  counts_.blocks_read += int64_t(loaded.size());
  Restored r{e.tokens, e.session, e.taint, e.hidden, e.regions};
  note_read(e, read, t0);
  return r;
}

std::vector<int32_t> SessionSpill::resident_tokens() const {
  for (const auto& [id, e] : entries_)
    if (e.resident) return e.tokens;
  return {};
}

std::span<const int32_t> SessionSpill::session_tokens(std::string_view session) const {
  return session_record(session).tokens;
}

SessionSpill::SessionRecord SessionSpill::session_record(std::string_view session) const {
  if (session.empty()) return {};
  auto it = entries_.find(entry_id(session, {}));
  if (it == entries_.end() || it->second.anchors.empty()) return {};
  const Entry& e = it->second;
  SessionRecord r;
  r.tokens = std::span<const int32_t>(e.tokens).first(
      size_t(std::min<int64_t>(int64_t(e.tokens.size()), e.anchors.back().position)));
  r.hidden = e.hidden;
  r.regions = e.regions;
  return r;
}

core::Result<SessionSpill::Restored> SessionSpill::restore_resident(engine::Engine& engine) {
  for (auto& [id, e] : entries_) {
    if (!e.resident) continue;
    Restored r{e.tokens, e.session, e.taint, e.hidden, e.regions};
    const int64_t n = int64_t(e.tokens.size());
    if (n > engine.capacity()) return Status::invalid_argument("session spill: too long");
    if (Status s = restore_entry(engine, e, n, 0); !s.is_ok()) return s;
    return r;
  }
  return Status::not_found("session spill: no resident entry");
}

void SessionSpill::clear() {
  std::vector<std::string> ids;
  for (const auto& [id, e] : entries_) ids.push_back(id);
  for (const std::string& id : ids) drop_entry(id);
}

SessionSpillStats SessionSpill::stats() const {
  SessionSpillStats s = counts_;
  s.entries = int64_t(entries_.size());
  s.bytes = 0;
  for (const auto& [name, b] : file_bytes_) s.bytes += int64_t(b);
  const double rate = read_bytes_per_s_ > 0 ? read_bytes_per_s_ : options_.prior_read_bytes_per_s;
  s.read_mb_per_s = int64_t(rate / 1e6);
  return s;
}

}  // namespace anchorage::cache

#include "cache/disk_files.h"

#include <nlohmann/json.hpp>

namespace anchorage::cache {
namespace {

using core::Reason;
using core::Status;

constexpr const char* kChunkSuffix = ".chunk";
constexpr const char* kAnchorSuffix = ".anchor";

Status corrupt(Reason r, const std::string& what) {
  return Status::corruption(r, "disk tier: " + what);
}

std::vector<int64_t> rows_shape(const core::TensorSpec& spec, int64_t rows) {
  std::vector<int64_t> shape = spec.shape;
  shape[size_t(spec.token_axis)] = rows;
  return shape;
}

std::span<const std::byte> bytes_of(const void* p, size_t n) {
  return {static_cast<const std::byte*>(p), n};
}

// The file's sections are exactly `specs` (names, dtypes, shapes: views with `rows` along the
// token axis; rows < 0: sections, whole).
Status check_sections(const CacheFile& file, const std::vector<core::TensorSpec>& specs,
                      int64_t rows) {
  const auto& secs = file.sections();
  if (secs.size() != specs.size()) return corrupt(Reason::kLayout, "section count differs");
  for (size_t i = 0; i < specs.size(); ++i) {
    const core::TensorSpec& spec = specs[i];
    const std::vector<int64_t> shape = rows < 0 ? spec.shape : rows_shape(spec, rows);
    const uint64_t bytes =
        rows < 0 ? uint64_t(spec.bytes()) : uint64_t(rows * spec.bytes_per_token());
    if (secs[i].name != spec.name || secs[i].dtype != core::dtype_name(spec.dtype) ||
        secs[i].shape != shape || secs[i].length != bytes)
      return corrupt(Reason::kLayout,
                     "section " + std::to_string(i) + " differs from " + spec.name);
  }
  return Status::ok();
}

Status check_fingerprint(const nlohmann::json& meta, const std::string& fingerprint) {
  if (!meta.contains("fingerprint") || !meta["fingerprint"].is_string())
    return corrupt(Reason::kLengthRange, "no fingerprint");
  if (meta["fingerprint"].get<std::string>() != fingerprint)
    return corrupt(Reason::kFingerprint, "another engine's file");
  return Status::ok();
}

bool get_i64(const nlohmann::json& meta, const char* field, int64_t* out) {
  if (!meta.contains(field) || !meta[field].is_number_integer()) return false;
  *out = meta[field].get<int64_t>();
  return true;
}

std::optional<CacheKey> get_key(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s.empty()) return CacheKey{};
  return CacheKey::from_hex(s);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string chunk_name(const CacheKey& key) {
  return key.hex() + kChunkSuffix;
}
std::string anchor_name(const CacheKey& key) {
  return key.hex() + kAnchorSuffix;
}

bool parse_blob_name(const std::string& name, CacheKey* key, bool* is_anchor) {
  std::string stem;
  if (ends_with(name, kChunkSuffix)) {
    stem = name.substr(0, name.size() - std::string(kChunkSuffix).size());
    *is_anchor = false;
  } else if (ends_with(name, kAnchorSuffix)) {
    stem = name.substr(0, name.size() - std::string(kAnchorSuffix).size());
    *is_anchor = true;
  } else {
    return false;
  }
  auto k = CacheKey::from_hex(stem);
  if (!k) return false;
  *key = *k;
  return true;
}

Status put_chunk(BlobStore& store, const std::string& fingerprint, const ChunkInfo& info,
                 std::span<const int32_t> tokens, const RowCopy& rows,
                 const core::StateLayout& layout) {
  const int64_t n = info.end - info.begin;
  if (int64_t(tokens.size()) != n || rows.begin() != info.begin || rows.end() != info.end)
    return Status::invalid_argument("disk tier: a chunk's rows and tokens disagree");
  nlohmann::json meta = {{"fingerprint", fingerprint},
                         {"begin", info.begin},
                         {"end", info.end},
                         {"prev", info.prev.is_zero() ? std::string() : info.prev.hex()},
                         {"tokens", std::vector<int32_t>(tokens.begin(), tokens.end())}};
  CacheFileWriter w(CacheFileKind::kChunk, info.key, std::move(meta));
  for (size_t i = 0; i < layout.views.size(); ++i)
    w.add_section(layout.views[i].name, std::string(core::dtype_name(layout.views[i].dtype)),
                  rows_shape(layout.views[i], n), bytes_of(rows.part(i), rows.part_bytes(i)));
  return store.put(chunk_name(info.key), w.parts());
}

Status put_anchor(BlobStore& store, const std::string& fingerprint, const AnchorInfo& info,
                  const SectionCopy& sections, const core::StateLayout& layout) {
  std::vector<std::string> chunks;
  for (const CacheKey& k : info.chunks) chunks.push_back(k.hex());
  nlohmann::json meta = {{"fingerprint", fingerprint},
                         {"position", info.position},
                         {"written", info.written_s},
                         {"chunks", chunks}};
  CacheFileWriter w(CacheFileKind::kAnchor, info.key, std::move(meta));
  for (size_t i = 0; i < layout.sections.size(); ++i)
    w.add_section(layout.sections[i].name, std::string(core::dtype_name(layout.sections[i].dtype)),
                  layout.sections[i].shape, bytes_of(sections.part(i), sections.part_bytes(i)));
  return store.put(anchor_name(info.key), w.parts());
}

core::Result<ChunkInfo> chunk_info(const CacheFile& file, const std::string& fingerprint,
                                   const core::StateLayout& layout) {
  const nlohmann::json& m = file.meta();
  if (Status s = check_fingerprint(m, fingerprint); !s.is_ok()) return s;
  ChunkInfo info;
  info.key = file.key();
  info.bytes = file.file_bytes();
  if (!get_i64(m, "begin", &info.begin) || !get_i64(m, "end", &info.end) || info.begin < 0 ||
      info.end <= info.begin || !m.contains("tokens") || !m["tokens"].is_array() ||
      int64_t(m["tokens"].size()) != info.end - info.begin || !m.contains("prev"))
    return corrupt(Reason::kLengthRange, "a chunk's header is malformed");
  auto prev = get_key(m["prev"]);
  if (!prev || prev->is_zero() != (info.begin == 0))
    return corrupt(Reason::kLengthRange, "a chunk's prev key is malformed");
  info.prev = *prev;
  if (Status s = check_sections(file, layout.views, info.end - info.begin); !s.is_ok()) return s;
  return info;
}

core::Result<AnchorInfo> anchor_info(const CacheFile& file, const std::string& fingerprint,
                                     const core::StateLayout& layout) {
  const nlohmann::json& m = file.meta();
  if (Status s = check_fingerprint(m, fingerprint); !s.is_ok()) return s;
  AnchorInfo info;
  info.key = file.key();
  info.bytes = file.file_bytes();
  if (!get_i64(m, "position", &info.position) || info.position <= 0 ||
      !get_i64(m, "written", &info.written_s) || !m.contains("chunks") || !m["chunks"].is_array() ||
      m["chunks"].empty())
    return corrupt(Reason::kLengthRange, "an anchor's header is malformed");
  for (const nlohmann::json& k : m["chunks"]) {
    auto key = get_key(k);
    if (!key || key->is_zero()) return corrupt(Reason::kLengthRange, "an anchor's chunk list");
    info.chunks.push_back(*key);
  }
  if (info.chunks.back() != info.key)
    return corrupt(Reason::kLengthRange, "an anchor's last chunk is not its own prefix");
  if (Status s = check_sections(file, layout.sections, -1); !s.is_ok()) return s;
  return info;
}

Status read_chunk_rows(const CacheFile& file, const ChunkInfo& info,
                       std::span<const int32_t> prompt_tokens, RowCopy* rows) {
  const nlohmann::json& ids = file.meta()["tokens"];
  if (int64_t(prompt_tokens.size()) != info.end - info.begin ||
      int64_t(ids.size()) != info.end - info.begin)
    return corrupt(Reason::kLayout, "a chunk's token count differs from the prompt's");
  for (size_t i = 0; i < prompt_tokens.size(); ++i)
    if (!ids[i].is_number_integer() || ids[i].get<int64_t>() != prompt_tokens[i])
      return corrupt(Reason::kLayout, "a chunk's token ids differ from the prompt's");
  for (size_t i = 0; i < rows->parts(); ++i) {
    std::span<std::byte> dst(static_cast<std::byte*>(rows->mutable_part(i)), rows->part_bytes(i));
    if (Status s = file.read_section(i, dst); !s.is_ok()) return s;
  }
  return Status::ok();
}

Status read_anchor_sections(const CacheFile& file, SectionCopy* sections) {
  for (size_t i = 0; i < sections->parts(); ++i) {
    std::span<std::byte> dst(static_cast<std::byte*>(sections->mutable_part(i)),
                             sections->part_bytes(i));
    if (Status s = file.read_section(i, dst); !s.is_ok()) return s;
  }
  return Status::ok();
}

}  // namespace anchorage::cache

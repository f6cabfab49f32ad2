#include "cache/cache_file.h"

#include <algorithm>
#include <cstring>

#include "core/byte_order.h"
#include "core/crc32c.h"

namespace anchorage::cache {
namespace {

using core::get_u32le;
using core::put_u32le;
using core::put_u64le;

using core::Reason;
using core::Status;

const std::byte kZeros[kCacheFileAlign] = {};

// The header crc covers every header byte but its own field: [0, 24) and [28, H).
uint32_t header_crc(std::span<const std::byte> header) {
  uint32_t c = core::crc32c(header.data(), kOffHeaderCrc);
  c = core::crc32c_extend(c, header.data() + kOffReserved, header.size() - kOffReserved);
  return core::crc32c_mask(c);
}

// A section's crc starts from the file's key, its kind and the section's index, so a section
// copied into another file or another place fails its check.
uint32_t section_crc_seed(const CacheKey& key, CacheFileKind kind, uint32_t index) {
  std::byte seed[24];
  put_u64le(seed, key.lo);
  put_u64le(seed + 8, key.hi);
  put_u32le(seed + 16, uint32_t(kind));
  put_u32le(seed + 20, index);
  return core::crc32c(seed, sizeof(seed));
}

uint32_t section_crc(const CacheKey& key, CacheFileKind kind, uint32_t index,
                     std::span<const std::byte> data) {
  uint32_t c = section_crc_seed(key, kind, index);
  c = core::crc32c_extend(c, data.data(), data.size());
  const uint64_t pad = round_up_to_align(data.size()) - data.size();
  c = core::crc32c_extend(c, kZeros, pad);
  return core::crc32c_mask(c);
}

Status corrupt(Reason r, const std::string& what) {
  return Status::corruption(r, "cache file: " + what);
}

}  // namespace

CacheFileWriter::CacheFileWriter(CacheFileKind kind, const CacheKey& key, nlohmann::json meta)
    : kind_(kind), key_(key), meta_(std::move(meta)) {}

void CacheFileWriter::add_section(std::string name, std::string dtype, std::vector<int64_t> shape,
                                  std::span<const std::byte> data) {
  CacheFileSection s;
  s.name = std::move(name);
  s.dtype = std::move(dtype);
  s.shape = std::move(shape);
  s.length = data.size();
  s.crc = section_crc(key_, kind_, uint32_t(sections_.size()), data);
  sections_.push_back(std::move(s));
  data_.push_back(data);
}

std::vector<std::byte> CacheFileWriter::header() const {
  // The offsets depend on the header's length, which depends on the offsets' digits: lay the
  // sections out for a header of one line, and again with more lines until it fits.
  uint64_t lines = 1;
  for (;;) {
    const uint64_t h = lines * kCacheFileAlign;
    nlohmann::json meta = meta_;
    meta["key"] = key_.hex();
    nlohmann::json secs = nlohmann::json::array();
    uint64_t offset = h;
    for (const CacheFileSection& s : sections_) {
      secs.push_back({{"name", s.name},
                      {"dtype", s.dtype},
                      {"shape", s.shape},
                      {"offset", offset},
                      {"length", s.length},
                      {"crc", s.crc}});
      offset += round_up_to_align(s.length);
    }
    meta["sections"] = std::move(secs);
    const std::string text = meta.dump();
    if (kOffMeta + text.size() > h) {
      lines = (kOffMeta + text.size() + kCacheFileAlign - 1) / kCacheFileAlign;
      continue;
    }
    std::vector<std::byte> out(h, std::byte{0});
    std::memcpy(out.data() + kOffMagic, kCacheFileMagic, sizeof(kCacheFileMagic));
    put_u32le(out.data() + kOffVersion, kCacheFileVersion);
    put_u32le(out.data() + kOffKind, uint32_t(kind_));
    put_u32le(out.data() + kOffHeaderLength, uint32_t(h));
    put_u32le(out.data() + kOffMetaLength, uint32_t(text.size()));
    std::memcpy(out.data() + kOffMeta, text.data(), text.size());
    put_u32le(out.data() + kOffHeaderCrc, header_crc(out));
    return out;
  }
}

uint64_t CacheFileWriter::file_bytes() const {
  uint64_t n = header().size();
  for (const CacheFileSection& s : sections_) n += round_up_to_align(s.length);
  return n;
}

std::vector<std::span<const std::byte>> CacheFileWriter::parts() {
  header_ = header();
  std::vector<std::span<const std::byte>> parts;
  parts.push_back(header_);
  for (const auto& d : data_) {
    parts.push_back(d);
    const uint64_t pad = round_up_to_align(d.size()) - d.size();
    if (pad > 0) parts.push_back(std::span<const std::byte>(kZeros, pad));
  }
  return parts;
}

Status CacheFileWriter::write(core::Fs& fs, const std::string& path) {
  return core::write_file_atomically(fs, path, parts());
}

std::vector<std::byte> CacheFileWriter::bytes() const {
  std::vector<std::byte> out = header();
  for (const auto& d : data_) {
    out.insert(out.end(), d.begin(), d.end());
    out.resize(round_up_to_align(out.size()), std::byte{0});
  }
  return out;
}

Status parse_cache_file_header(std::span<const std::byte> header, uint64_t file_bytes,
                               CacheFileKind kind, CacheKey* key, nlohmann::json* meta,
                               std::vector<CacheFileSection>* sections) {
  if (header.size() < kCacheFileAlign) return corrupt(Reason::kShortRead, "header cut short");
  if (std::memcmp(header.data() + kOffMagic, kCacheFileMagic, sizeof(kCacheFileMagic)) != 0)
    return corrupt(Reason::kBadMagic, "not a cache file");
  const uint32_t version = get_u32le(header.data() + kOffVersion);
  if (version != kCacheFileVersion)
    return Status::corruption(Reason::kBadVersion,
                              "cache file: format version " + std::to_string(version) +
                                  ", this build reads " + std::to_string(kCacheFileVersion));
  const uint64_t h = get_u32le(header.data() + kOffHeaderLength);
  const uint64_t j = get_u32le(header.data() + kOffMetaLength);
  if (h < kCacheFileAlign || h % kCacheFileAlign != 0 || h > kMaxHeaderLength || h > file_bytes)
    return corrupt(Reason::kLengthRange, "header length out of range");
  if (header.size() < h) return corrupt(Reason::kShortRead, "header cut short");
  header = header.first(h);
  if (j > h - kOffMeta) return corrupt(Reason::kLengthRange, "metadata length out of range");
  if (get_u32le(header.data() + kOffHeaderCrc) != header_crc(header))
    return corrupt(Reason::kHeaderCrc, "header checksum mismatch");
  // Checked: the bytes are the writer's. What follows guards against a writer's bug (or a
  // crafted file with a valid crc) as strictly as against damage.
  if (get_u32le(header.data() + kOffKind) != uint32_t(kind))
    return corrupt(Reason::kLayout, "another kind of cache file");
  if (get_u32le(header.data() + kOffReserved) != 0)
    return corrupt(Reason::kLengthRange, "reserved field set");
  const char* text = reinterpret_cast<const char*>(header.data() + kOffMeta);
  nlohmann::json m = nlohmann::json::parse(text, text + j, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object()) return corrupt(Reason::kLengthRange, "metadata is not a JSON object");
  auto k = m.contains("key") && m["key"].is_string()
               ? CacheKey::from_hex(m["key"].get<std::string>())
               : std::nullopt;
  if (!k) return corrupt(Reason::kLengthRange, "metadata has no key");
  if (!m.contains("sections") || !m["sections"].is_array() || m["sections"].size() > kMaxSections)
    return corrupt(Reason::kLengthRange, "metadata has no section table");
  std::vector<CacheFileSection> secs;
  uint64_t expect = h;  // sections follow the header back to back, each padded
  for (const nlohmann::json& e : m["sections"]) {
    CacheFileSection s;
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("dtype") ||
        !e["dtype"].is_string() || !e.contains("shape") || !e["shape"].is_array() ||
        !e.contains("offset") || !e["offset"].is_number_unsigned() || !e.contains("length") ||
        !e["length"].is_number_unsigned() || !e.contains("crc") || !e["crc"].is_number_unsigned())
      return corrupt(Reason::kLengthRange, "a section entry is malformed");
    s.name = e["name"].get<std::string>();
    s.dtype = e["dtype"].get<std::string>();
    for (const nlohmann::json& d : e["shape"]) {
      if (!d.is_number_unsigned()) return corrupt(Reason::kLengthRange, "a shape is malformed");
      s.shape.push_back(d.get<int64_t>());
    }
    s.offset = e["offset"].get<uint64_t>();
    s.length = e["length"].get<uint64_t>();
    const uint64_t crc = e["crc"].get<uint64_t>();
    if (crc > 0xffffffffull) return corrupt(Reason::kLengthRange, "a crc out of range");
    s.crc = uint32_t(crc);
    if (s.offset != expect || s.length > file_bytes || s.offset > file_bytes - s.length)
      return corrupt(Reason::kLengthRange, "a section lies outside the file");
    expect = s.offset + round_up_to_align(s.length);
    secs.push_back(std::move(s));
  }
  if (expect != file_bytes)
    return corrupt(expect > file_bytes ? Reason::kShortRead : Reason::kLengthRange,
                   "the file's size is not what its sections make");
  *key = *k;
  *meta = std::move(m);
  *sections = std::move(secs);
  return Status::ok();
}

core::Result<CacheFile> CacheFile::open(core::Fs& fs, const std::string& path, CacheFileKind kind) {
  auto opened = fs.open_read(path);
  if (!opened) return opened.error();
  return open(std::move(*opened), kind);
}

core::Result<CacheFile> CacheFile::open(std::unique_ptr<core::ReadableFile> opened,
                                        CacheFileKind kind) {
  std::shared_ptr<core::ReadableFile> file = std::move(opened);
  const uint64_t size = file->size();
  std::vector<std::byte> header(kCacheFileAlign);
  auto n = file->read_at(0, header);
  if (!n) return n.error();
  if (*n < kCacheFileAlign) return corrupt(Reason::kShortRead, "shorter than one header line");
  const uint64_t h = get_u32le(header.data() + kOffHeaderLength);
  if (h > kCacheFileAlign && h <= kMaxHeaderLength && h % kCacheFileAlign == 0 && h <= size) {
    header.resize(h);
    auto rest = file->read_at(kCacheFileAlign, std::span(header).subspan(kCacheFileAlign));
    if (!rest) return rest.error();
    if (*rest < h - kCacheFileAlign) return corrupt(Reason::kShortRead, "header cut short");
  }
  CacheFile f;
  f.kind_ = kind;
  f.file_bytes_ = size;
  if (Status s = parse_cache_file_header(header, size, kind, &f.key_, &f.meta_, &f.sections_);
      !s.is_ok())
    return s;
  f.file_ = std::move(file);
  return f;
}

uint64_t CacheFile::sections_bytes() const {
  if (sections_.empty()) return 0;
  return section_offset(sections_.size() - 1) + round_up_to_align(sections_.back().length);
}

Status CacheFile::read_sections_unchecked(std::span<std::byte> room) const {
  const uint64_t total = sections_bytes();
  if (room.size() < total)
    return Status::invalid_argument("cache file: sections read without room for their padding");
  if (total == 0) return Status::ok();
  auto n = file_->read_at(sections_[0].offset, room.first(size_t(total)));
  if (!n) return n.error();
  if (*n != total) return corrupt(Reason::kShortRead, "sections cut short");
  return Status::ok();
}

Status CacheFile::check_sections(std::span<const std::byte> room) const {
  for (size_t i = 0; i < sections_.size(); ++i)
    if (Status s = check_section(i, room); !s.is_ok()) return s;
  return Status::ok();
}

Status CacheFile::check_section(size_t i, std::span<const std::byte> room) const {
  return check_section(i, room, [](uint64_t, std::span<const std::byte>) {});
}

Status CacheFile::check_section(size_t i, std::span<const std::byte> room,
                                const SectionVisitor& visit) const {
  if (i >= sections_.size() || room.size() < sections_bytes())
    return Status::invalid_argument("cache file: a section checked without its padding");
  // Small enough that a piece is still in the first-level cache when `visit` reads it.
  constexpr uint64_t kPiece = uint64_t(16) << 10;
  const std::byte* p = room.data() + section_offset(i);
  const uint64_t length = sections_[i].length;
  uint32_t c = section_crc_seed(key_, kind_, uint32_t(i));
  for (uint64_t at = 0; at < length; at += kPiece) {
    const size_t n = size_t(std::min(kPiece, length - at));
    c = core::crc32c_extend(c, p + at, n);
    visit(at, {p + at, n});
  }
  c = core::crc32c_extend(c, p + length, size_t(round_up_to_align(length) - length));
  return check_section_crc(i, c);
}

Status CacheFile::check_section_crc(size_t i, uint32_t crc) const {
  if (core::crc32c_mask(crc) != sections_[i].crc)
    return corrupt(Reason::kSectionCrc, "section " + std::to_string(i) + " checksum mismatch");
  return Status::ok();
}

Status CacheFile::read_section(size_t i, std::span<std::byte> dst) const {
  if (i >= sections_.size() || dst.size() != sections_[i].length)
    return Status::invalid_argument("cache file: section read of the wrong size");
  const CacheFileSection& s = sections_[i];
  auto n = file_->read_at(s.offset, dst);
  if (!n) return n.error();
  if (*n != dst.size()) return corrupt(Reason::kShortRead, "section cut short");
  uint32_t c = section_crc_seed(key_, kind_, uint32_t(i));
  c = core::crc32c_extend(c, dst.data(), dst.size());
  const uint64_t pad = round_up_to_align(s.length) - s.length;
  if (pad > 0) {
    std::byte tail[kCacheFileAlign];
    auto m = file_->read_at(s.offset + s.length, std::span(tail, pad));
    if (!m) return m.error();
    if (*m != pad) return corrupt(Reason::kShortRead, "section padding cut short");
    c = core::crc32c_extend(c, tail, pad);
  }
  return check_section_crc(i, c);
}

Status CacheFile::read_section_padded(size_t i, std::span<std::byte> room) const {
  if (i >= sections_.size() || room.size() < round_up_to_align(sections_[i].length))
    return Status::invalid_argument("cache file: section read without room for its padding");
  const CacheFileSection& s = sections_[i];
  const std::span<std::byte> padded = room.first(round_up_to_align(s.length));
  auto n = file_->read_at(s.offset, padded);
  if (!n) return n.error();
  if (*n != padded.size()) return corrupt(Reason::kShortRead, "section cut short");
  uint32_t c = section_crc_seed(key_, kind_, uint32_t(i));
  c = core::crc32c_extend(c, padded.data(), padded.size());
  return check_section_crc(i, c);
}

}  // namespace anchorage::cache

// CacheFileWriter and CacheFile: write and read one cache file of the disk tier (and later the
// session spill): a header of 4 KiB lines (magic, version, kind, lengths, a masked crc32c, the
// JSON metadata) and 4 KiB-aligned sections, each with its own crc32c. Every byte is specified
// in docs/formats/disk-tier.md; the constants are in cache_file_format.h.
//
// A reader trusts nothing before its check: open() bounds every length by the file's size and
// checks magic, version, kind, the header crc and the section table before it returns, and
// read_section() checks the section's crc before the caller may use a byte. Every refusal is
// Status::corruption with a core::Reason (bad_magic, bad_version, header_crc, section_crc,
// short_read, length_range, layout); the owner deletes the file and falls back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_file_format.h"
#include "cache/cache_key.h"
#include "core/dtype.h"
#include "core/fs.h"
#include "core/status.h"

namespace anchorage::cache {

struct CacheFileSection {
  std::string name;
  std::string dtype;  // an element type's name ("f32", "bf16", "u8", …)
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // from the start of the file; a multiple of kCacheFileAlign
  uint64_t length = 0;  // bytes of data (the zero padding after it is not counted)
  uint32_t crc = 0;     // masked crc32c (docs/formats/disk-tier.md "Section checksum")
};

class CacheFileWriter {
 public:
  // `meta` holds the kind's own fields; the writer adds "key" and "sections".
  CacheFileWriter(CacheFileKind kind, const CacheKey& key, nlohmann::json meta);
  // The bytes must stay valid until write() or bytes() returns.
  void add_section(std::string name, std::string dtype, std::vector<int64_t> shape,
                   std::span<const std::byte> data);
  // The file's bytes as parts to write back to back (header, each section, its padding);
  // they point into this writer and the sections' data.
  std::vector<std::span<const std::byte>> parts();
  // The whole file, written with core::write_file_atomically.
  core::Status write(core::Fs& fs, const std::string& path);
  // The file's bytes (tests and the golden files).
  std::vector<std::byte> bytes() const;
  uint64_t file_bytes() const;

 private:
  std::vector<std::byte> header() const;

  CacheFileKind kind_;
  CacheKey key_;
  nlohmann::json meta_;
  std::vector<CacheFileSection> sections_;
  std::vector<std::span<const std::byte>> data_;
  std::vector<std::byte> header_;  // parts()' first part
};

class CacheFile {
 public:
  // Opens and checks the header. NotFound when there is no file; Corruption (with a reason)
  // for anything else that is not a whole, well-formed file of `kind` and this version.
  static core::Result<CacheFile> open(core::Fs& fs, const std::string& path, CacheFileKind kind);
  static core::Result<CacheFile> open(std::unique_ptr<core::ReadableFile> file, CacheFileKind kind);

  CacheFileKind kind() const { return kind_; }
  const CacheKey& key() const { return key_; }
  const nlohmann::json& meta() const { return meta_; }
  const std::vector<CacheFileSection>& sections() const { return sections_; }
  uint64_t file_bytes() const { return file_bytes_; }
  // Reads section i into dst (exactly its length) and checks its crc; on a mismatch dst holds
  // unchecked bytes and must not be used.
  core::Status read_section(size_t i, std::span<std::byte> dst) const;
  // The same into a buffer with room for the section's padding too (at least its length rounded
  // up to kCacheFileAlign): one read of whole blocks, which core::Fs takes straight into the
  // buffer under O_DIRECT when it is 4 KiB aligned (no bounce buffer, no second read for the
  // padding). The section is the first length bytes of `room`.
  core::Status read_section_padded(size_t i, std::span<std::byte> room) const;
  // Every section in one read, the way read_section_padded reads one (a spill block's few
  // hundred KB sections one read each ran at half the drive's rate): `room` holds at least
  // sections_bytes(); section i starts at section_offset(i) in it. The bytes are unchecked
  // until check_sections(room) says so: a reader thread only waits on the drive and the
  // thread that uses the bytes checks them first.
  core::Status read_sections_unchecked(std::span<std::byte> room) const;
  core::Status check_sections(std::span<const std::byte> room) const;
  // Section i's crc alone in such a buffer (threads may check sections apart).
  core::Status check_section(size_t i, std::span<const std::byte> room) const;
  // The same check, handing `visit` the section's own bytes (not its padding) in order, piece
  // by piece, each as soon as the crc has read it: a caller's own pass over them (the spill's
  // sums) reads them from the core's cache instead of memory. `at` is the piece's offset in the
  // section. The bytes are unchecked until the call returns ok.
  using SectionVisitor = std::function<void(uint64_t at, std::span<const std::byte> piece)>;
  core::Status check_section(size_t i, std::span<const std::byte> room,
                             const SectionVisitor& visit) const;
  uint64_t sections_bytes() const;
  uint64_t section_offset(size_t i) const { return sections_[i].offset - sections_[0].offset; }

 private:
  // `crc`: the section's crc32c register over its padded bytes, before the mask.
  core::Status check_section_crc(size_t i, uint32_t crc) const;

  CacheFileKind kind_ = CacheFileKind::kChunk;
  CacheKey key_;
  nlohmann::json meta_;
  std::vector<CacheFileSection> sections_;
  uint64_t file_bytes_ = 0;
  std::shared_ptr<core::ReadableFile> file_;
};

// Parses and checks a header held in memory (`file_bytes`: the whole file's size, to bound the
// sections). CacheFile::open reads the first line, then the rest of the header, and calls this;
// the fuzzer calls it directly.
core::Status parse_cache_file_header(std::span<const std::byte> header, uint64_t file_bytes,
                                     CacheFileKind kind, CacheKey* key, nlohmann::json* meta,
                                     std::vector<CacheFileSection>* sections);

}  // namespace anchorage::cache

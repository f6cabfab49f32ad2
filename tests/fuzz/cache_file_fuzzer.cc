// libFuzzer target: arbitrary bytes as a cache file (docs/formats/disk-tier.md). Whatever the
// bytes, CacheFile::open returns a file or a corruption with a reason, never crashes, hangs,
// reads out of bounds or allocates by a length the file cannot back; a file that opens has
// its sections inside it, back to back, and reading each either checks out or fails its crc.
// Built with clang by tests/fuzz/tests.cmake, run for a bounded time by ctest, seeded with
// tests/golden/ (one valid file per format version) and tests/corpus/cache_file/.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cache/cache_file.h"
#include "core/check.h"
#include "core/mem_fs.h"

using anchorage::cache::CacheFile;
using anchorage::cache::CacheFileKind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  anchorage::core::MemFs fs;
  ANCHORAGE_CHECK(fs.create_dir("/f").is_ok());
  std::vector<std::byte> bytes(size);
  if (size > 0) std::memcpy(bytes.data(), data, size);
  ANCHORAGE_CHECK(anchorage::core::write_file_atomically(fs, "/f/x", bytes).is_ok());
  for (CacheFileKind kind :
       {CacheFileKind::kChunk, CacheFileKind::kAnchor, CacheFileKind::kCounts}) {
    auto f = CacheFile::open(fs, "/f/x", kind);
    if (!f) {
      ANCHORAGE_CHECK(f.error().code() == anchorage::core::StatusCode::kCorruption);
      ANCHORAGE_CHECK(f.error().reason() != anchorage::core::Reason::kNone);
      continue;
    }
    uint64_t end = 0;
    for (size_t i = 0; i < f->sections().size(); ++i) {
      const auto& s = f->sections()[i];
      ANCHORAGE_CHECK(s.offset + s.length <= size);
      ANCHORAGE_CHECK(s.offset >= end);
      end = s.offset + s.length;
      std::vector<std::byte> dst(s.length);
      const auto st = f->read_section(i, dst);
      ANCHORAGE_CHECK(st.is_ok() || st.reason() == anchorage::core::Reason::kSectionCrc);
    }
  }
  return 0;
}

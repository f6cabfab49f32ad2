// The cache file format (docs/formats/disk-tier.md): a round trip, the golden file of every
// format version (a writer change without a version bump fails here), and a byte flipped in
// every region of a file — the fixed fields, the metadata, the header's padding, each
// section and each section's padding — is refused with the reason the format names.
#include "cache/cache_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/mem_fs.h"

namespace anchorage::cache {
namespace {

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(uint8_t(seed + i * 7));
  return v;
}

// The golden file's content: fixed, small, two sections (one a whole line, one padded).
struct GoldenInputs {
  std::vector<std::byte> a = pattern(4096, 1);
  std::vector<std::byte> b = pattern(100, 9);
  CacheKey key{0x0123456789abcdefull, 0xfedcba9876543210ull};
  CacheFileWriter writer() const {
    CacheFileWriter w(CacheFileKind::kChunk, key,
                      nlohmann::json{{"fingerprint", "golden"}, {"begin", 0}, {"end", 2}});
    w.add_section("K", "f32", {2, 512}, a);
    w.add_section("V", "bf16", {50}, b);
    return w;
  }
};

std::filesystem::path golden_path() {
  return std::filesystem::path(ANCHORAGE_SOURCE_DIR) / "tests" / "golden" /
         ("cache-file-v" + std::to_string(kCacheFileVersion) + ".bin");
}

void put_file(core::MemFs& fs, const std::string& path, const std::vector<std::byte>& bytes) {
  ASSERT_TRUE(core::write_file_atomically(fs, path, bytes).is_ok());
}

TEST(CacheFile, RoundTripsMetadataAndSections) {
  core::MemFs fs;
  ASSERT_TRUE(fs.create_dir("/t").is_ok());
  GoldenInputs in;
  CacheFileWriter w = in.writer();
  ASSERT_TRUE(w.write(fs, "/t/f").is_ok());
  auto f = CacheFile::open(fs, "/t/f", CacheFileKind::kChunk);
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  EXPECT_EQ(f->key(), in.key);
  EXPECT_EQ(f->meta()["fingerprint"], "golden");
  ASSERT_EQ(f->sections().size(), 2u);
  EXPECT_EQ(f->sections()[0].offset, 4096u);
  EXPECT_EQ(f->sections()[1].offset, 8192u);
  EXPECT_EQ(f->file_bytes(), 3u * 4096u);
  std::vector<std::byte> a(4096), b(100);
  ASSERT_TRUE(f->read_section(0, a).is_ok());
  ASSERT_TRUE(f->read_section(1, b).is_ok());
  EXPECT_EQ(std::memcmp(a.data(), in.a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(b.data(), in.b.data(), b.size()), 0);
  // Another kind is refused even though every check would pass.
  auto other = CacheFile::open(fs, "/t/f", CacheFileKind::kAnchor);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().reason(), core::Reason::kLayout);
}

TEST(CacheFile, AHeaderOfManyLinesWhenTheMetadataNeedsThem) {
  std::vector<int32_t> ids(3000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(100000 + i);
  CacheFileWriter w(CacheFileKind::kChunk, CacheKey{1, 2}, nlohmann::json{{"tokens", ids}});
  auto data = pattern(10, 3);
  w.add_section("x", "u8", {10}, data);
  std::vector<std::byte> bytes = w.bytes();
  core::MemFs fs;
  ASSERT_TRUE(fs.create_dir("/t").is_ok());
  put_file(fs, "/t/f", bytes);
  auto f = CacheFile::open(fs, "/t/f", CacheFileKind::kChunk);
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  EXPECT_GT(f->sections()[0].offset, 4096u);
  EXPECT_EQ(f->meta()["tokens"].size(), 3000u);
}

// The writer's bytes for fixed inputs never change within a format version. To add the file
// of a new version: ANCHORAGE_WRITE_GOLDEN=1 build/tests/cache_tests --gtest_filter='*Golden*'
TEST(CacheFile, GoldenFileOfThisVersionIsByteEqual) {
  const std::vector<std::byte> bytes = GoldenInputs().writer().bytes();
  const auto path = golden_path();
  if (std::getenv("ANCHORAGE_WRITE_GOLDEN") != nullptr) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "no golden file " << path
                         << ": a format version without its golden file";
  std::vector<char> golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(golden.size(), bytes.size())
      << "the writer's output changed: bump kCacheFileVersion and the doc";
  EXPECT_EQ(std::memcmp(golden.data(), bytes.data(), bytes.size()), 0)
      << "the writer's output changed: bump kCacheFileVersion and the doc";
  // And the golden file still reads.
  core::MemFs fs;
  ASSERT_TRUE(fs.create_dir("/t").is_ok());
  put_file(fs, "/t/g", bytes);
  EXPECT_TRUE(CacheFile::open(fs, "/t/g", CacheFileKind::kChunk).has_value());
}

// Opens the file and reads every section, one read each or (at_once) all in one read checked
// afterwards; the first failure's reason (kNone: all good).
core::Reason check_all(core::MemFs& fs, const std::string& path, bool at_once = false) {
  auto f = CacheFile::open(fs, path, CacheFileKind::kChunk);
  if (!f) return f.error().reason();
  if (at_once) {
    std::vector<std::byte> room(f->sections_bytes());
    core::Status s = f->read_sections_unchecked(room);
    if (s.is_ok()) s = f->check_sections(room);
    return s.reason();
  }
  for (size_t i = 0; i < f->sections().size(); ++i) {
    std::vector<std::byte> dst(f->sections()[i].length);
    core::Status s = f->read_section(i, dst);
    if (!s.is_ok()) return s.reason();
  }
  return core::Reason::kNone;
}

TEST(CacheFile, EverySectionInOneReadHoldsTheSectionsWhereTheTableSays) {
  core::MemFs fs;
  ASSERT_TRUE(fs.create_dir("/t").is_ok());
  GoldenInputs in;
  ASSERT_TRUE(in.writer().write(fs, "/t/f").is_ok());
  auto f = CacheFile::open(fs, "/t/f", CacheFileKind::kChunk);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->sections_bytes(), 2u * 4096u);  // both sections with the second's padding
  EXPECT_EQ(f->section_offset(1), 4096u);
  std::vector<std::byte> room(f->sections_bytes() - 1);
  EXPECT_EQ(f->read_sections_unchecked(room).code(), core::StatusCode::kInvalidArgument);
  room.resize(f->sections_bytes());
  ASSERT_TRUE(f->read_sections_unchecked(room).is_ok());
  ASSERT_TRUE(f->check_sections(room).is_ok());
  EXPECT_EQ(std::memcmp(room.data(), in.a.data(), in.a.size()), 0);
  EXPECT_EQ(std::memcmp(room.data() + f->section_offset(1), in.b.data(), in.b.size()), 0);
  // One section's padding read the way read_section_padded reads it.
  std::vector<std::byte> one(4096);
  ASSERT_TRUE(f->read_section_padded(1, one).is_ok());
  EXPECT_EQ(std::memcmp(one.data(), in.b.data(), in.b.size()), 0);
  EXPECT_FALSE(f->read_section_padded(1, std::span(one).first(100)).is_ok());
}

TEST(CacheFile, AFlippedByteInEveryRegionIsRefusedWithItsReason) {
  const std::vector<std::byte> good = GoldenInputs().writer().bytes();
  core::MemFs fs;
  ASSERT_TRUE(fs.create_dir("/t").is_ok());
  put_file(fs, "/t/f", good);
  ASSERT_EQ(check_all(fs, "/t/f"), core::Reason::kNone);
  struct Region {
    const char* name;
    size_t offset;
    core::Reason reason;
  };
  const Region regions[] = {
      {"magic", 0, core::Reason::kBadMagic},
      {"version", 8, core::Reason::kBadVersion},
      {"kind", 12, core::Reason::kHeaderCrc},
      {"header length", 17, core::Reason::kLengthRange},
      {"metadata length", 20, core::Reason::kHeaderCrc},
      {"header crc", 25, core::Reason::kHeaderCrc},
      {"reserved", 29, core::Reason::kHeaderCrc},
      {"metadata", 40, core::Reason::kHeaderCrc},
      {"header padding", 4000, core::Reason::kHeaderCrc},
      {"section 0", 4096 + 17, core::Reason::kSectionCrc},
      {"section 1", 8192 + 3, core::Reason::kSectionCrc},
      {"section 1 padding", 8192 + 200, core::Reason::kSectionCrc},
      {"last byte", 3 * 4096 - 1, core::Reason::kSectionCrc},
  };
  for (const Region& r : regions) {
    std::vector<std::byte> bad = good;
    bad[r.offset] ^= std::byte{0x10};
    put_file(fs, "/t/f", bad);
    EXPECT_EQ(check_all(fs, "/t/f"), r.reason) << r.name;
    EXPECT_EQ(check_all(fs, "/t/f", /*at_once=*/true), r.reason) << r.name << ", at once";
  }
  // Cut short anywhere: refused (the sizes no longer add up).
  for (size_t n : {size_t(0), size_t(100), size_t(4096), size_t(8192), good.size() - 1}) {
    std::vector<std::byte> cut(good.begin(), good.begin() + long(n));
    put_file(fs, "/t/f", cut);
    const core::Reason got = check_all(fs, "/t/f");
    EXPECT_TRUE(got == core::Reason::kShortRead || got == core::Reason::kLengthRange)
        << "cut at " << n << ": " << core::reason_name(got);
  }
  // A section moved to another place fails its crc (the crc is tied to its index).
  std::vector<std::byte> swapped = good;
  std::memcpy(swapped.data() + 8192, good.data() + 4096, 4096);
  put_file(fs, "/t/f", swapped);
  EXPECT_EQ(check_all(fs, "/t/f"), core::Reason::kSectionCrc);
  EXPECT_EQ(check_all(fs, "/t/f", /*at_once=*/true), core::Reason::kSectionCrc);
}

}  // namespace
}  // namespace anchorage::cache

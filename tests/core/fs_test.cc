// MemFs, the atomic write protocol and crc32c.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/crc32c.h"
#include "core/fs.h"
#include "core/mem_fs.h"
#include "support/fs_text.h"

namespace anchorage::core {
namespace {

using test::bytes_of;
using test::read_all;

TEST(Crc32c, MatchesTheStandardCheckValueAndExtends) {
  const char digits[] = "123456789";
  EXPECT_EQ(crc32c(digits, 9), 0xe3069283u);  // the CRC-32C check value (RFC 3720)
  EXPECT_EQ(crc32c_extend(crc32c(digits, 4), digits + 4, 5), crc32c(digits, 9));
  EXPECT_EQ(crc32c(digits, 0), 0u);
  uint32_t c = crc32c(digits, 9);
  EXPECT_NE(crc32c_mask(c), c);
  EXPECT_EQ(crc32c_unmask(crc32c_mask(c)), c);
}

TEST(MemFs, AtomicWriteLeavesTheWholeFileAndNoTmp) {
  MemFs fs;
  ASSERT_TRUE(fs.create_dir("/cache/disk").is_ok());
  auto data = bytes_of("hello, anchorage");
  ASSERT_TRUE(write_file_atomically(fs, "/cache/disk/a.chunk", data).is_ok());
  EXPECT_EQ(read_all(fs, "/cache/disk/a.chunk"), "hello, anchorage");
  auto names = fs.list("/cache/disk");
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(*names, std::vector<std::string>{"a.chunk"});
  fs.power_cut();  // written, synced, renamed, directory synced: it survives
  EXPECT_EQ(read_all(fs, "/cache/disk/a.chunk"), "hello, anchorage");
}

TEST(MemFs, PowerCutDropsWhatWasNotSynced) {
  MemFs fs;
  ASSERT_TRUE(fs.create_dir("/d").is_ok());
  auto f = fs.create("/d/x.tmp");
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->append(bytes_of("abc")).is_ok());
  ASSERT_TRUE((*f)->sync().is_ok());
  ASSERT_TRUE((*f)->append(bytes_of("def")).is_ok());
  ASSERT_TRUE(fs.sync_dir("/d").is_ok());
  ASSERT_TRUE(fs.rename("/d/x.tmp", "/d/x").is_ok());  // the rename is not synced
  fs.power_cut();
  EXPECT_FALSE(fs.exists("/d/x"));
  EXPECT_EQ(read_all(fs, "/d/x.tmp"), "abc");
  auto removed = remove_tmp_files(fs, "/d");
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(fs.exists("/d/x.tmp"));
}

TEST(MemFs, MissingFilesAreNotFound) {
  MemFs fs;
  ASSERT_TRUE(fs.create_dir("/d").is_ok());
  EXPECT_EQ(fs.open_read("/d/none").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.remove("/d/none").code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.create("/nodir/x").error().code(), StatusCode::kNotFound);
}

TEST(MemFs, ALockIsExclusiveUntilReleased) {
  MemFs fs;
  auto a = fs.lock("/d/lock");
  ASSERT_TRUE(a.has_value());
  auto b = fs.lock("/d/lock");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code(), StatusCode::kUnavailable);
  a->reset();
  EXPECT_TRUE(fs.lock("/d/lock").has_value());
}

TEST(FsPaths, JoinAndDir) {
  EXPECT_EQ(path_join("/a", "b"), "/a/b");
  EXPECT_EQ(path_join("/a/", "b"), "/a/b");
  EXPECT_EQ(path_dir("/a/b"), "/a");
  EXPECT_EQ(path_dir("b"), ".");
  EXPECT_EQ(path_dir("/b"), "/");
}

}  // namespace
}  // namespace anchorage::core

// FaultFs over MemFs: every fault it injects, and the write protocol under each of them — a
// failed or crashed write_file_atomically never leaves a file at the final path that is not
// whole (docs/style.md §8: fail the Nth operation, once and for good; power cuts).
#include "core/fault_fs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/mem_fs.h"
#include "support/fs_text.h"

namespace anchorage::core {
namespace {

using test::bytes_of;
using test::read_all;

const std::string kDir = "/cache";
const std::string kPath = "/cache/a.chunk";
const std::string kOld = "the old whole file";
const std::string kNew = "part one|part two|part three";

// Writes kNew in three appends (so append has calls 1..3 to fail).
Status write_new(Fs& fs) {
  const auto a = bytes_of("part one|"), b = bytes_of("part two|"), c = bytes_of("part three");
  const std::span<const std::byte> parts[] = {a, b, c};
  return write_file_atomically(fs, kPath, parts);
}

// A MemFs holding kOld at kPath, durable.
void init(MemFs& mem, bool with_old) {
  ASSERT_TRUE(mem.create_dir(kDir).is_ok());
  if (with_old) {
    ASSERT_TRUE(write_file_atomically(mem, kPath, bytes_of(kOld)).is_ok());
  }
}

bool has_tmp(Fs& fs) {
  auto names = fs.list(kDir);
  EXPECT_TRUE(names.has_value());
  for (const auto& n : *names)
    if (n.ends_with(kTmpSuffix)) return true;
  return false;
}

// The final path holds a whole file: the old one, the new one, or (no old one) nothing.
void expect_whole(MemFs& mem, bool with_old, const std::string& context) {
  if (!mem.exists(kPath)) {
    EXPECT_FALSE(with_old) << context << ": the old file is gone";
    return;
  }
  const std::string got = read_all(mem, kPath);
  EXPECT_TRUE(got == kNew || (with_old && got == kOld)) << context << ": \"" << got << "\"";
}

TEST(FaultFs, FailsTheNthCallOnceOrForGoodAndCounts) {
  MemFs mem;
  FaultFs fs(mem);
  ASSERT_TRUE(fs.create_dir(kDir).is_ok());
  fs.fail_nth(FsOp::kList, 2);
  EXPECT_TRUE(fs.list(kDir).has_value());
  EXPECT_EQ(fs.list(kDir).error().code(), StatusCode::kIOError);
  EXPECT_TRUE(fs.list(kDir).has_value());
  fs.fail_nth(FsOp::kCreateDir, 1, /*persistent=*/true);
  EXPECT_FALSE(fs.create_dir("/x").is_ok());
  EXPECT_FALSE(fs.create_dir("/y").is_ok());
  EXPECT_FALSE(mem.list("/y").has_value());  // the failed call did nothing
  EXPECT_EQ(fs.calls(FsOp::kList), 3);
  EXPECT_EQ(fs.calls(FsOp::kCreateDir), 3);
  EXPECT_EQ(fs.injected_failures(), 3);
  fs.clear_faults();
  EXPECT_TRUE(fs.create_dir("/y").is_ok());

  // Every other kind, through the same mechanism.
  ASSERT_TRUE(write_file_atomically(mem, kPath, bytes_of(kOld)).is_ok());
  fs.fail_nth(FsOp::kOpenRead, 1);
  EXPECT_FALSE(fs.open_read(kPath).has_value());
  fs.fail_nth(FsOp::kRead, 2);
  auto r = fs.open_read(kPath);
  ASSERT_TRUE(r.has_value());
  std::vector<std::byte> buf(4);
  EXPECT_TRUE((*r)->read_at(0, buf).has_value());
  EXPECT_FALSE((*r)->read_at(0, buf).has_value());
  fs.fail_nth(FsOp::kOpenAppend, 1);
  EXPECT_FALSE(fs.open_append(kPath).has_value());
  fs.fail_nth(FsOp::kRemove, 1);
  EXPECT_FALSE(fs.remove(kPath).is_ok());
  EXPECT_TRUE(mem.exists(kPath));
  fs.fail_nth(FsOp::kRename, 1);
  EXPECT_FALSE(fs.rename(kPath, kPath + "2").is_ok());
  fs.fail_nth(FsOp::kSyncDir, 1);
  EXPECT_FALSE(fs.sync_dir(kDir).is_ok());
  EXPECT_EQ(read_all(mem, kPath), kOld);
}

TEST(FaultFs, AShortWriteWritesAPrefixThenTheFileRefusesEverything) {
  MemFs mem;
  FaultFs fs(mem);
  ASSERT_TRUE(fs.create_dir(kDir).is_ok());
  auto f = fs.create(kPath);
  ASSERT_TRUE(f.has_value());
  fs.short_write_nth(2, 5);
  ASSERT_TRUE((*f)->append(bytes_of("head|")).is_ok());
  EXPECT_EQ((*f)->append(bytes_of("hello world")).code(), StatusCode::kIOError);
  EXPECT_EQ(read_all(mem, kPath), "head|hello");
  EXPECT_FALSE((*f)->append(bytes_of("more")).is_ok());  // sticky
  EXPECT_FALSE((*f)->sync().is_ok());
  EXPECT_EQ(read_all(mem, kPath), "head|hello");
}

// Fails the nth call of every kind the protocol makes, n = 1, 2, ... until the write finishes
// untouched; once and for good; with and without an old file in place. The final path never
// holds a part-written file, a failed write leaves no .tmp, and a power cut after it changes
// neither.
TEST(FaultFs, AFailedAtomicWriteNeverLeavesAPartialFile) {
  const FsOp kinds[] = {FsOp::kCreate, FsOp::kAppend, FsOp::kSync,
                        FsOp::kClose,  FsOp::kRename, FsOp::kSyncDir};
  int failed_writes = 0;
  for (FsOp op : kinds)
    for (bool persistent : {false, true})
      for (bool with_old : {false, true})
        for (int64_t n = 1;; ++n) {
          const std::string context = std::string(fs_op_name(op)) + " #" + std::to_string(n) +
                                      (persistent ? " for good" : " once") +
                                      (with_old ? ", over an old file" : "");
          MemFs mem;
          init(mem, with_old);
          FaultFs fs(mem);
          fs.fail_nth(op, n, persistent);
          Status s = write_new(fs);
          if (fs.injected_failures() == 0) {  // n passed the protocol's calls of this kind
            EXPECT_TRUE(s.is_ok()) << context;
            EXPECT_EQ(read_all(mem, kPath), kNew) << context;
            break;
          }
          ++failed_writes;
          EXPECT_FALSE(s.is_ok()) << context;
          EXPECT_FALSE(has_tmp(mem)) << context;
          expect_whole(mem, with_old, context);
          mem.power_cut();
          ASSERT_TRUE(remove_tmp_files(mem, kDir).has_value());
          EXPECT_FALSE(has_tmp(mem)) << context;
          expect_whole(mem, with_old, context);
        }
  // create, sync, close, rename, sync_dir once each and append three times, in 4 variants.
  EXPECT_EQ(failed_writes, (1 + 3 + 1 + 1 + 1 + 1) * 4);
}

TEST(FaultFs, AShortWriteInsideTheProtocolLeavesNoPartialFile) {
  for (int64_t n = 1; n <= 3; ++n)
    for (bool with_old : {false, true}) {
      MemFs mem;
      init(mem, with_old);
      FaultFs fs(mem);
      fs.short_write_nth(n, 4);
      EXPECT_FALSE(write_new(fs).is_ok()) << n;
      EXPECT_FALSE(has_tmp(mem)) << n;
      expect_whole(mem, with_old, "short append #" + std::to_string(n));
    }
}

// A power cut right after each step of the protocol (and after each append): after the cut
// and remove_tmp_files there is no .tmp, and the final path holds the old or the new file whole
// — the new one for certain once the directory was synced.
TEST(FaultFs, APowerCutAtEveryCrashPointLeavesWholeFilesOnly) {
  const std::pair<CrashPoint, int64_t> points[] = {
      {CrashPoint::kCreated, 1},  {CrashPoint::kAppended, 1}, {CrashPoint::kAppended, 2},
      {CrashPoint::kAppended, 3}, {CrashPoint::kSynced, 1},   {CrashPoint::kRenamed, 1},
      {CrashPoint::kDirSynced, 1}};
  for (auto [point, k] : points)
    for (bool with_old : {false, true}) {
      const std::string context = std::string(crash_point_name(point)) + " #" + std::to_string(k) +
                                  (with_old ? ", over an old file" : "");
      MemFs mem;
      init(mem, with_old);
      FaultFs fs(mem);
      int cuts = 0;
      fs.crash_at(point, k, [&] {
        mem.power_cut();
        ++cuts;
      });
      Status s = write_new(fs);
      EXPECT_EQ(cuts, 1) << context;
      EXPECT_TRUE(fs.crashed()) << context;
      // Nothing runs after a crash: the rest of the protocol failed, the .tmp removal too.
      EXPECT_EQ(s.is_ok(), point == CrashPoint::kDirSynced) << context;
      ASSERT_TRUE(remove_tmp_files(mem, kDir).has_value());
      EXPECT_FALSE(has_tmp(mem)) << context;
      expect_whole(mem, with_old, context);
      if (point == CrashPoint::kDirSynced) {
        EXPECT_EQ(read_all(mem, kPath), kNew) << context;
      } else if (point == CrashPoint::kRenamed) {
        // The rename was not durable yet: a cut undoes it (MemFs models the worst case).
        EXPECT_EQ(mem.exists(kPath), with_old) << context;
      }
    }
}

// A crash point armed `within` a path part counts only the steps on such paths: the kth of
// one writer's files, whatever another writer did in between.
TEST(FaultFs, ACrashWithinAPathCountsOnlyItsSteps) {
  MemFs mem;
  ASSERT_TRUE(mem.create_dir("/a").is_ok());
  ASSERT_TRUE(mem.create_dir("/b").is_ok());
  FaultFs fs(mem);
  std::vector<std::string> crashed_at;
  int n = 0;
  fs.crash_at(
      CrashPoint::kRenamed, 2, [&] { crashed_at.push_back(std::to_string(n)); }, "/b/");
  for (const char* path : {"/a/1", "/b/2", "/a/3", "/a/4", "/b/5", "/b/6"}) {
    ++n;
    ASSERT_TRUE(write_file_atomically(fs, path, bytes_of("x")).is_ok() || fs.crashed());
  }
  EXPECT_EQ(crashed_at, std::vector<std::string>({"5"})) << "the second rename under /b/";
  EXPECT_EQ(fs.crash_points_passed(CrashPoint::kRenamed), 5) << "every path still counted";
}

TEST(FaultFs, AFaultWhileRecoveringFromACutIsRetried) {
  MemFs mem;
  init(mem, false);
  FaultFs fs(mem);
  fs.crash_at(CrashPoint::kSynced, 1, [&] { mem.power_cut(); });
  EXPECT_FALSE(write_new(fs).is_ok());
  // MemFs dropped the .tmp's unsynced directory entry; leave a durable one as a leftover the
  // restart must clear, and fail its first removal.
  auto f = mem.create(kPath + kTmpSuffix);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->append(bytes_of("half")).is_ok());
  ASSERT_TRUE((*f)->sync().is_ok());
  ASSERT_TRUE((*f)->close().is_ok());
  ASSERT_TRUE(mem.sync_dir(kDir).is_ok());
  FaultFs restart(mem);
  restart.fail_nth(FsOp::kRemove, 1);
  EXPECT_FALSE(remove_tmp_files(restart, kDir).has_value());
  EXPECT_TRUE(has_tmp(mem));
  auto removed = remove_tmp_files(restart, kDir);
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(has_tmp(mem));
  EXPECT_FALSE(mem.exists(kPath));
}

}  // namespace
}  // namespace anchorage::core

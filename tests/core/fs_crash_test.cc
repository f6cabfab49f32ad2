// Real crashes: a child process (tests/core/fs_crash_child.cc) writes files through FaultFs
// over PosixFs and is SIGKILLed at every crash point the seam names; the test then reopens the
// directory as a restart would. remove_tmp_files clears the leftovers, and every file left at a
// final path reads back whole and correct (docs/style.md §8 "Real crash").
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/fault_fs.h"
#include "core/fs_crash_files.h"
#include "core/posix_fs.h"

namespace anchorage::core {
namespace {

constexpr int kFiles = 3;

// Runs the child; returns its wait status.
int run_child(const std::string& dir, CrashPoint point, int64_t k) {
  const std::string n = std::to_string(kFiles), kk = std::to_string(k);
  pid_t pid = ::fork();
  if (pid == 0) {
    const char* argv[] = {ANCHORAGE_FS_CRASH_CHILD, dir.c_str(), n.c_str(),
                          crash_point_name(point),  kk.c_str(),  nullptr};
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

// How many files are whole at their final paths when the process dies at the kth `point`:
// the page cache survives a process's death, so a rename that returned is there.
int files_done(CrashPoint point, int64_t k) {
  switch (point) {
    case CrashPoint::kAppended:
      return int((k - 1) / test::kCrashFileParts);
    case CrashPoint::kCreated:
    case CrashPoint::kSynced:
      return int(k - 1);
    case CrashPoint::kRenamed:
    case CrashPoint::kDirSynced:
      return int(k);
  }
  return -1;
}

TEST(FsCrash, AChildKilledAtEveryCrashPointLeavesOnlyWholeFiles) {
  char tmpl[] = "/tmp/anchorage_crash_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  const std::pair<CrashPoint, int64_t> cases[] = {
      {CrashPoint::kCreated, 1},  {CrashPoint::kCreated, 3},   {CrashPoint::kAppended, 1},
      {CrashPoint::kAppended, 2}, {CrashPoint::kAppended, 6},  {CrashPoint::kAppended, 8},
      {CrashPoint::kSynced, 1},   {CrashPoint::kSynced, 2},    {CrashPoint::kRenamed, 1},
      {CrashPoint::kRenamed, 3},  {CrashPoint::kDirSynced, 2}, {CrashPoint::kDirSynced, 3}};
  PosixFs fs;
  for (auto [point, k] : cases) {
    const std::string context = std::string(crash_point_name(point)) + " #" + std::to_string(k);
    const std::string dir = root + "/" + crash_point_name(point) + std::to_string(k);
    const int status = run_child(dir, point, k);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << context << ": the child was not killed (wait status " << status << ")";

    // The restart: clear the leftovers, then everything at a final path must be whole.
    const bool tmp_expected = point != CrashPoint::kRenamed && point != CrashPoint::kDirSynced;
    auto removed = remove_tmp_files(fs, dir);
    ASSERT_TRUE(removed.has_value()) << context;
    EXPECT_EQ(*removed, tmp_expected ? 1 : 0) << context;
    auto names = fs.list(dir);
    ASSERT_TRUE(names.has_value());
    std::sort(names->begin(), names->end());
    std::vector<std::string> want;
    for (int i = 0; i < files_done(point, k); ++i) want.push_back(test::crash_file_name(i));
    EXPECT_EQ(*names, want) << context;
    for (int i = 0; i < files_done(point, k); ++i) {
      const std::string path = path_join(dir, test::crash_file_name(i));
      auto f = fs.open_read(path);
      ASSERT_TRUE(f.has_value()) << context;
      const auto expect = test::crash_file_contents(i);
      std::vector<std::byte> got((*f)->size());
      auto n = (*f)->read_at(0, got);
      ASSERT_TRUE(n.has_value());
      EXPECT_EQ(*n, expect.size()) << context << " " << path;
      EXPECT_TRUE(got == expect) << context << " " << path;
    }
  }
  // The control: a crash point past the last step never comes, and the child writes it all.
  const std::string whole = root + "/whole";
  const int status = run_child(whole, CrashPoint::kDirSynced, kFiles + 1);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(fs.list(whole)->size(), size_t(kFiles));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace anchorage::core

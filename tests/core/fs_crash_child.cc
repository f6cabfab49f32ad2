// The crash test's child: `fs_crash_child DIR N POINT K` writes files 0..N-1
// (fs_crash_files.h) into DIR with write_file_atomically on PosixFs, through a FaultFs whose
// hook SIGKILLs this process when crash point POINT (created, appended, synced, renamed,
// dir_synced) is passed for the Kth time. Exits 0 when it wrote everything (K never came),
// 1 on an I/O error, 2 on bad arguments.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/fault_fs.h"
#include "core/fs_crash_files.h"  // tests/core
#include "core/posix_fs.h"

using namespace anchorage;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: fs_crash_child DIR N POINT K\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int n = std::atoi(argv[2]);
  const int64_t k = std::atoll(argv[4]);
  int point = -1;
  for (int p = 0; p < core::kCrashPointCount; ++p)
    if (std::strcmp(argv[3], core::crash_point_name(static_cast<core::CrashPoint>(p))) == 0)
      point = p;
  if (point < 0 || n < 1 || k < 1) return 2;

  core::PosixFs posix;
  core::FaultFs fs(posix);
  fs.crash_at(static_cast<core::CrashPoint>(point), k, [] { std::raise(SIGKILL); });
  if (!fs.create_dir(dir).is_ok()) return 1;
  for (int i = 0; i < n; ++i) {
    std::vector<std::vector<std::byte>> parts;
    std::vector<std::span<const std::byte>> spans;
    for (int p = 0; p < test::kCrashFileParts; ++p) parts.push_back(test::crash_file_part(i, p));
    for (const auto& p : parts) spans.emplace_back(p);
    core::Status s =
        core::write_file_atomically(fs, core::path_join(dir, test::crash_file_name(i)), spans);
    if (!s.is_ok()) {
      std::fprintf(stderr, "%s\n", s.to_string().c_str());
      return 1;
    }
  }
  return 0;
}

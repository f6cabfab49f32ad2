// FaultFs: a core::Fs that forwards every call to another Fs (MemFs or PosixFs) and injects the
// failures the cache code must survive (docs/style.md §8): the Nth call of a kind fails with an
// io_error (once, or that call and every later one), an append writes only a prefix and then
// fails (a short write), and a hook runs at a named crash point — right after a step of the
// write protocol (write_file_atomically: created, appended, synced, renamed, dir_synced) — where
// a test kills its process (SIGKILL in a forked child) or cuts MemFs's power. After a crash
// point's hook returns, the FaultFs is dead: every later call fails, as nothing runs after a
// real crash. Anchor: google/leveldb util/testutil.h (ErrorEnv), db/fault_injection_test.cc.
//
// Counts start at the FaultFs's creation and cover calls through it and through the files it
// opened. Threading: thread-safe; hooks run on the thread that made the call.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/fs.h"

namespace anchorage::core {

// The kinds of call FaultFs counts and can fail (kRead is ReadableFile::read_at; kAppend, kSync
// and kClose are WritableFile's).
enum class FsOp {
  kCreate,
  kOpenAppend,
  kOpenRead,
  kAppend,
  kSync,
  kClose,
  kRename,
  kRemove,
  kCreateDir,
  kSyncDir,
  kList,
  kRead,
};
inline constexpr int kFsOpCount = 12;
const char* fs_op_name(FsOp op);

// Where a crash can strike: right after the named step succeeded (write_file_atomically's
// order; the points fire for any file, not only `.tmp` ones).
enum class CrashPoint {
  kCreated,    // after create()
  kAppended,   // after an append()
  kSynced,     // after a file's sync()
  kRenamed,    // after rename()
  kDirSynced,  // after sync_dir()
};
inline constexpr int kCrashPointCount = 5;
const char* crash_point_name(CrashPoint p);

class FaultFs : public Fs {
 public:
  // `base` must outlive this FaultFs and every file it opens.
  explicit FaultFs(Fs& base);
  ~FaultFs() override;

  // --- Faults (each replaces an earlier one of the same kind) ---
  // The nth call of `op` from now (n >= 1) fails with an io_error and does nothing; with
  // `persistent`, every later call of `op` fails too.
  void fail_nth(FsOp op, int64_t n, bool persistent = false);
  // The nth append from now writes the first `prefix_bytes` of its data (fewer if it has fewer)
  // to the file below, then fails; the file refuses every later call, as any failed append.
  void short_write_nth(int64_t n, size_t prefix_bytes);
  // Runs `hook` when crash point `p` is passed for the kth time from now (k >= 1); afterwards
  // every call fails (the process is dead). A hook that does not return (SIGKILL) is fine.
  // With `within`, only steps on a path containing it count toward k (one writer's files
  // among several: the session spill's, not the disk tier's).
  void crash_at(CrashPoint p, int64_t k, std::function<void()> hook, std::string within = {});
  // Drops every fault and revives a dead FaultFs; counts go on.
  void clear_faults();

  // Calls of `op` so far, failed ones included; how many failures were injected.
  int64_t calls(FsOp op) const;
  int64_t crash_points_passed(CrashPoint p) const;
  int64_t injected_failures() const;
  bool crashed() const;

  Result<std::unique_ptr<WritableFile>> create(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> open_append(const std::string& path) override;
  Result<std::unique_ptr<ReadableFile>> open_read(const std::string& path) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  Status create_dir(const std::string& path) override;
  Status sync_dir(const std::string& path) override;
  Result<std::vector<std::string>> list(const std::string& dir) override;
  Result<uint64_t> file_size(const std::string& path) override;
  bool exists(const std::string& path) override;
  Result<FsSpace> space(const std::string& dir) override;
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override;

 private:
  class Writable;  // the files it opens report their calls through enter() and passed()
  class Readable;

  // Counts a call of `op` on `what` (a path, for the message) and says whether it must fail:
  // OK lets it through. For an append, *short_prefix gets the bytes to write before failing
  // (SIZE_MAX: all of them).
  Status enter(FsOp op, const std::string& what, size_t* short_prefix = nullptr);
  // After a step on `path` succeeded: counts the crash point and runs its hook when due.
  void passed(CrashPoint p, const std::string& path);

  struct OpFault {
    int64_t at = 0;  // the call count at which it fires (0: none)
    bool persistent = false;
  };

  Fs& base_;
  mutable std::mutex mu_;
  std::array<int64_t, kFsOpCount> calls_{};
  std::array<OpFault, kFsOpCount> faults_{};
  std::array<int64_t, kCrashPointCount> passed_{};
  int64_t short_write_at_ = 0;  // the append count at which the short write fires (0: none)
  size_t short_write_bytes_ = 0;
  CrashPoint crash_point_ = CrashPoint::kCreated;
  int64_t crash_at_ = 0;      // crash_point_'s count at which the hook runs (0: none)
  std::string crash_within_;  // only paths containing it count ("": every path)
  int64_t crash_seen_ = 0;    // crash_point_ passed on such paths since crash_at
  std::function<void()> crash_hook_;
  int64_t injected_ = 0;
  bool crashed_ = false;
};

}  // namespace anchorage::core

#include "core/fault_fs.h"

#include <algorithm>
#include <cstdint>

namespace anchorage::core {

const char* fs_op_name(FsOp op) {
  static constexpr const char* kNames[kFsOpCount] = {
      "create", "open_append", "open_read",  "append",   "sync", "close",
      "rename", "remove",      "create_dir", "sync_dir", "list", "read"};
  return kNames[static_cast<int>(op)];
}

const char* crash_point_name(CrashPoint p) {
  static constexpr const char* kNames[kCrashPointCount] = {"created", "appended", "synced",
                                                           "renamed", "dir_synced"};
  return kNames[static_cast<int>(p)];
}

// A file opened through FaultFs: every call is counted and may fail; a failed append or sync
// makes it refuse every later call (the WritableFile contract), injected or not.
class FaultFs::Writable : public WritableFile {
 public:
  Writable(FaultFs* fs, std::string path, std::unique_ptr<WritableFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Status append(std::span<const std::byte> data) override {
    if (!error_.is_ok()) return error_;
    size_t prefix = SIZE_MAX;
    if (Status s = fs_->enter(FsOp::kAppend, path_, &prefix); !s.is_ok()) return error_ = s;
    if (prefix != SIZE_MAX) {
      Status s = base_->append(data.first(std::min(prefix, data.size())));
      return error_ = s.is_ok() ? Status::io_error("injected short write to " + path_) : s;
    }
    if (Status s = base_->append(data); !s.is_ok()) return error_ = s;
    fs_->passed(CrashPoint::kAppended, path_);
    return Status::ok();
  }
  Status sync() override {
    if (!error_.is_ok()) return error_;
    if (Status s = fs_->enter(FsOp::kSync, path_); !s.is_ok()) return error_ = s;
    if (Status s = base_->sync(); !s.is_ok()) return error_ = s;
    fs_->passed(CrashPoint::kSynced, path_);
    return Status::ok();
  }
  Status close() override {
    if (closed_) return Status::ok();
    closed_ = true;
    // An injected close failure still closes the file below: close() is where a descriptor
    // goes whatever the outcome.
    Status s = fs_->enter(FsOp::kClose, path_);
    Status closed = base_->close();
    return s.is_ok() ? closed : s;
  }
  uint64_t size() const override { return base_->size(); }

 private:
  FaultFs* fs_;
  const std::string path_;
  std::unique_ptr<WritableFile> base_;
  Status error_;
  bool closed_ = false;
};

class FaultFs::Readable : public ReadableFile {
 public:
  Readable(FaultFs* fs, std::string path, std::unique_ptr<ReadableFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> dst) override {
    if (Status s = fs_->enter(FsOp::kRead, path_); !s.is_ok()) return s;
    return base_->read_at(offset, dst);
  }
  uint64_t size() const override { return base_->size(); }

 private:
  FaultFs* fs_;
  const std::string path_;
  std::unique_ptr<ReadableFile> base_;
};

FaultFs::FaultFs(Fs& base) : base_(base) {}
FaultFs::~FaultFs() = default;

void FaultFs::fail_nth(FsOp op, int64_t n, bool persistent) {
  std::lock_guard<std::mutex> lock(mu_);
  const int i = static_cast<int>(op);
  faults_[i] = OpFault{calls_[i] + std::max<int64_t>(n, 1), persistent};
}

void FaultFs::short_write_nth(int64_t n, size_t prefix_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  short_write_at_ = calls_[static_cast<int>(FsOp::kAppend)] + std::max<int64_t>(n, 1);
  short_write_bytes_ = prefix_bytes;
}

void FaultFs::crash_at(CrashPoint p, int64_t k, std::function<void()> hook, std::string within) {
  std::lock_guard<std::mutex> lock(mu_);
  crash_point_ = p;
  crash_at_ = std::max<int64_t>(k, 1);
  crash_within_ = std::move(within);
  crash_seen_ = 0;
  crash_hook_ = std::move(hook);
}

void FaultFs::clear_faults() {
  std::lock_guard<std::mutex> lock(mu_);
  faults_ = {};
  short_write_at_ = 0;
  crash_at_ = 0;
  crash_hook_ = nullptr;
  crashed_ = false;
}

int64_t FaultFs::calls(FsOp op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_[static_cast<int>(op)];
}

int64_t FaultFs::crash_points_passed(CrashPoint p) const {
  std::lock_guard<std::mutex> lock(mu_);
  return passed_[static_cast<int>(p)];
}

int64_t FaultFs::injected_failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

bool FaultFs::crashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return crashed_;
}

Status FaultFs::enter(FsOp op, const std::string& what, size_t* short_prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  const int i = static_cast<int>(op);
  const int64_t n = ++calls_[i];
  if (crashed_) return Status::io_error(std::string(fs_op_name(op)) + " after a crash: " + what);
  const OpFault& f = faults_[i];
  if (f.at != 0 && (n == f.at || (f.persistent && n > f.at))) {
    ++injected_;
    return Status::io_error("injected " + std::string(fs_op_name(op)) + " failure #" +
                            std::to_string(n) + ": " + what);
  }
  if (op == FsOp::kAppend && short_prefix && n == short_write_at_) {
    ++injected_;
    *short_prefix = short_write_bytes_;
  }
  return Status::ok();
}

void FaultFs::passed(CrashPoint p, const std::string& path) {
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++passed_[static_cast<int>(p)];
    if (crash_at_ == 0 || p != crash_point_) return;
    if (!crash_within_.empty() && path.find(crash_within_) == std::string::npos) return;
    if (++crash_seen_ != crash_at_) return;
    crashed_ = true;
    hook = std::move(crash_hook_);
    crash_at_ = 0;
  }
  // Outside the lock: the hook may look at the file system (power_cut) or never return.
  if (hook) hook();
}

Result<std::unique_ptr<WritableFile>> FaultFs::create(const std::string& path) {
  if (Status s = enter(FsOp::kCreate, path); !s.is_ok()) return s;
  auto f = base_.create(path);
  if (!f) return f.error();
  passed(CrashPoint::kCreated, path);
  return std::unique_ptr<WritableFile>(new Writable(this, path, std::move(f.value())));
}

Result<std::unique_ptr<WritableFile>> FaultFs::open_append(const std::string& path) {
  if (Status s = enter(FsOp::kOpenAppend, path); !s.is_ok()) return s;
  auto f = base_.open_append(path);
  if (!f) return f.error();
  return std::unique_ptr<WritableFile>(new Writable(this, path, std::move(f.value())));
}

Result<std::unique_ptr<ReadableFile>> FaultFs::open_read(const std::string& path) {
  if (Status s = enter(FsOp::kOpenRead, path); !s.is_ok()) return s;
  auto f = base_.open_read(path);
  if (!f) return f.error();
  return std::unique_ptr<ReadableFile>(new Readable(this, path, std::move(f.value())));
}

Status FaultFs::rename(const std::string& from, const std::string& to) {
  if (Status s = enter(FsOp::kRename, from); !s.is_ok()) return s;
  if (Status s = base_.rename(from, to); !s.is_ok()) return s;
  passed(CrashPoint::kRenamed, to);
  return Status::ok();
}

Status FaultFs::remove(const std::string& path) {
  if (Status s = enter(FsOp::kRemove, path); !s.is_ok()) return s;
  return base_.remove(path);
}

Status FaultFs::create_dir(const std::string& path) {
  if (Status s = enter(FsOp::kCreateDir, path); !s.is_ok()) return s;
  return base_.create_dir(path);
}

Status FaultFs::sync_dir(const std::string& path) {
  if (Status s = enter(FsOp::kSyncDir, path); !s.is_ok()) return s;
  if (Status s = base_.sync_dir(path); !s.is_ok()) return s;
  passed(CrashPoint::kDirSynced, path);
  return Status::ok();
}

Result<std::vector<std::string>> FaultFs::list(const std::string& dir) {
  if (Status s = enter(FsOp::kList, dir); !s.is_ok()) return s;
  return base_.list(dir);
}

// Sizes, existence and space are questions, not steps: never failed, only forwarded.
Result<uint64_t> FaultFs::file_size(const std::string& path) {
  return base_.file_size(path);
}
bool FaultFs::exists(const std::string& path) {
  return base_.exists(path);
}
Result<FsSpace> FaultFs::space(const std::string& dir) {
  return base_.space(dir);
}

Result<std::unique_ptr<FileLock>> FaultFs::lock(const std::string& path) {
  return base_.lock(path);
}

}  // namespace anchorage::core

#include "core/posix_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace anchorage::core {

namespace {

constexpr size_t kBlock = PosixFs::kBlockBytes;
// Staging and bounce buffers: large enough that a chunk file's multi-GB write or read is a few
// thousand syscalls, small enough to allocate per open file.
constexpr size_t kStageBytes = size_t{1} << 20;

uint64_t round_down(uint64_t x) {
  return x / kBlock * kBlock;
}
uint64_t round_up(uint64_t x) {
  return (x + kBlock - 1) / kBlock * kBlock;
}
bool aligned(uint64_t x) {
  return x % kBlock == 0;
}

std::string errno_text(int err) {
  char buf[128];
  // The GNU strerror_r returns the message (perhaps not in buf); thread-safe unlike strerror.
  return strerror_r(err, buf, sizeof buf);
}

// ENOENT is the one errno callers act on (a missing cache file is a miss, not a failure).
Status os_error(const char* op, const std::string& path, int err) {
  std::string m = std::string(op) + " " + path + ": " + errno_text(err);
  if (err == ENOENT) return Status::not_found(std::move(m));
  return Status::io_error(std::move(m));
}

// Retries a syscall interrupted by a signal before it did anything.
template <typename F>
auto retry_eintr(F f) {
  for (;;) {
    auto r = f();
    if (r >= 0 || errno != EINTR) return r;
  }
}

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using BlockBuffer = std::unique_ptr<std::byte, FreeDeleter>;

BlockBuffer alloc_blocks(size_t bytes) {
  return BlockBuffer(static_cast<std::byte*>(std::aligned_alloc(kBlock, round_up(bytes))));
}

Status pwrite_all(int fd, const std::byte* p, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    ssize_t w = retry_eintr([&] { return ::pwrite(fd, p, n, off); });
    if (w < 0) return os_error("pwrite", path, errno);
    if (w == 0) return os_error("pwrite", path, EIO);
    p += w;
    n -= size_t(w);
    off += uint64_t(w);
  }
  return Status::ok();
}

// Reads until n bytes or the end of the file. With O_DIRECT a transfer that stops inside a
// block has reached the end of the file (a further read would not be aligned).
Result<size_t> pread_full(int fd, std::byte* p, size_t n, uint64_t off, bool direct,
                          const std::string& path) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = retry_eintr([&] { return ::pread(fd, p + got, n - got, off + got); });
    if (r < 0) return os_error("pread", path, errno);
    if (r == 0) break;
    got += size_t(r);
    if (direct && !aligned(got)) break;
  }
  return got;
}

// Buffered I/O on a cache file: drop its pages so a multi-GB head does not push the model's
// weights out of the page cache. The kernel drops only whole pages inside the range, so the
// range is widened to page boundaries (a read at offset 1 must drop its first page too).
// Advice only: a failure changes no byte, so it is not an error.
void drop_pages(int fd, uint64_t off, uint64_t n) {
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = off / page * page;
  const uint64_t end = n == 0 ? 0 : (off + n + page - 1) / page * page;
  (void)::posix_fadvise(fd, off_t(begin), n == 0 ? 0 : off_t(end - begin), POSIX_FADV_DONTNEED);
}

class PosixReadableFile : public ReadableFile {
 public:
  PosixReadableFile(std::string path, int fd, bool direct, uint64_t size)
      : path_(std::move(path)), fd_(fd), direct_(direct), size_(size) {}
  ~PosixReadableFile() override { ::close(fd_); }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> dst) override {
    if (offset >= size_ || dst.empty()) return size_t{0};
    const size_t n = size_t(std::min<uint64_t>(dst.size(), size_ - offset));
    if (!direct_) {
      auto r = pread_full(fd_, dst.data(), n, offset, false, path_);
      drop_pages(fd_, offset, n);
      return r;
    }
    // The fast path: the caller's buffer takes the transfer as it is (a read that ends at a
    // file end inside a block still transfers whole blocks, which dst has room for).
    if (aligned(offset) && aligned(reinterpret_cast<uintptr_t>(dst.data())) &&
        round_up(n) <= dst.size()) {
      auto r = pread_full(fd_, dst.data(), size_t(round_up(n)), offset, true, path_);
      if (!r) return r.error();
      return std::min(n, *r);
    }
    return bounce_read(offset, dst.first(n));
  }
  uint64_t size() const override { return size_; }

 private:
  // Reads whole blocks around [offset, offset + dst.size()) into an aligned buffer, a stage at
  // a time, and copies out the part asked for.
  Result<size_t> bounce_read(uint64_t offset, std::span<std::byte> dst) {
    const size_t cap = size_t(std::min<uint64_t>(kStageBytes, round_up(dst.size()) + kBlock));
    BlockBuffer bounce = alloc_blocks(cap);
    size_t done = 0;
    while (done < dst.size()) {
      const uint64_t pos = offset + done;
      const uint64_t start = round_down(pos);
      const size_t skip = size_t(pos - start);
      const size_t want = size_t(std::min<uint64_t>(cap, round_up(skip + dst.size() - done)));
      auto r = pread_full(fd_, bounce.get(), want, start, true, path_);
      if (!r) return r.error();
      if (*r <= skip) break;
      const size_t take = std::min(*r - skip, dst.size() - done);
      std::memcpy(dst.data() + done, bounce.get() + skip, take);
      done += take;
      if (*r < want) break;
    }
    return done;
  }

  const std::string path_;
  const int fd_;
  const bool direct_;
  const uint64_t size_;
};

class PosixWritableFile : public WritableFile {
 public:
  // `written` bytes are already in the file (block-aligned with O_DIRECT); the first `staged`
  // bytes of `stage` follow them.
  PosixWritableFile(std::string path, int fd, bool direct, BlockBuffer stage, uint64_t written,
                    size_t staged)
      : path_(std::move(path)),
        fd_(fd),
        direct_(direct),
        stage_(std::move(stage)),
        written_(written),
        staged_(staged) {}
  ~PosixWritableFile() override {
    if (!closed_) ignore_status(close(), "close a cache file nobody closed");
  }

  Status append(std::span<const std::byte> data) override {
    if (closed_) return Status::io_error("append to " + path_ + " after close");
    if (!error_.is_ok()) return error_;
    while (!data.empty()) {
      // Nothing staged and whole blocks from a 4 KiB-aligned buffer (the tier's own staging
      // slots): they go to the file as they are, without a copy.
      if (staged_ == 0 && data.size() >= kBlock &&
          (!direct_ || aligned(reinterpret_cast<uintptr_t>(data.data())))) {
        const size_t n = size_t(round_down(data.size()));
        Status s = pwrite_all(fd_, data.data(), n, written_, path_);
        if (!s.is_ok()) return fail(s);
        written_ += n;
        data = data.subspan(n);
        continue;
      }
      const size_t n = std::min(kStageBytes - staged_, data.size());
      std::memcpy(stage_.get() + staged_, data.data(), n);
      staged_ += n;
      data = data.subspan(n);
      if (staged_ == kStageBytes) {
        Status s = pwrite_all(fd_, stage_.get(), staged_, written_, path_);
        if (!s.is_ok()) return fail(s);
        written_ += staged_;
        staged_ = 0;
      }
    }
    return Status::ok();
  }

  Status sync() override {
    if (closed_) return Status::io_error("sync " + path_ + " after close");
    if (!error_.is_ok()) return error_;
    if (Status s = write_tail(); !s.is_ok()) return fail(s);
    // fsync, not fdatasync: a new file's length is metadata the data is useless without.
    if (retry_eintr([&] { return ::fsync(fd_); }) != 0)
      return fail(os_error("fsync", path_, errno));
    if (!direct_) drop_pages(fd_, 0, 0);
    return Status::ok();
  }

  Status close() override {
    if (closed_) return Status::ok();
    closed_ = true;
    Status s = error_.is_ok() ? write_tail() : error_;
    if (!direct_) drop_pages(fd_, 0, 0);
    // No EINTR retry: Linux releases the descriptor even when close reports EINTR.
    if (::close(fd_) != 0 && s.is_ok()) s = os_error("close", path_, errno);
    return s;
  }

  uint64_t size() const override { return written_ + staged_; }

 private:
  Status fail(Status s) {
    error_ = s;
    return s;
  }

  // Puts every staged byte in the file. With O_DIRECT the partial last block goes out padded
  // with zeros and the file is cut back to its true length; that block stays staged so the next
  // append rewrites it whole at an aligned offset.
  Status write_tail() {
    if (staged_ == 0) return Status::ok();
    if (!direct_) {
      Status s = pwrite_all(fd_, stage_.get(), staged_, written_, path_);
      if (!s.is_ok()) return s;
      written_ += staged_;
      staged_ = 0;
      return Status::ok();
    }
    const size_t padded = size_t(round_up(staged_));
    std::memset(stage_.get() + staged_, 0, padded - staged_);
    Status s = pwrite_all(fd_, stage_.get(), padded, written_, path_);
    if (!s.is_ok()) return s;
    if (padded != staged_ &&
        retry_eintr([&] { return ::ftruncate(fd_, off_t(written_ + staged_)); }) != 0)
      return os_error("ftruncate", path_, errno);
    const size_t full = size_t(round_down(staged_));
    std::memmove(stage_.get(), stage_.get() + full, staged_ - full);
    written_ += full;
    staged_ -= full;
    return Status::ok();
  }

  const std::string path_;
  const int fd_;
  const bool direct_;
  BlockBuffer stage_;
  uint64_t written_;  // bytes in the file before stage_[0]
  size_t staged_;
  Status error_;  // sticky: after a failure every later call returns it
  bool closed_ = false;
};

std::string without_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

PosixFs::PosixFs(PosixFsOptions opts) : opts_(opts) {}
PosixFs::~PosixFs() = default;

Result<int> PosixFs::open_file(const std::string& path, int flags, bool* direct) {
  flags |= O_CLOEXEC;
  if (opts_.direct_io) {
    int fd = -1;
    if (opts_.test_refuse_direct_io) {
      errno = EINVAL;
    } else {
      fd = retry_eintr([&] { return ::open(path.c_str(), flags | O_DIRECT, 0600); });
    }
    if (fd >= 0) {
      *direct = true;
      direct_opens_.fetch_add(1);
      return fd;
    }
    // EINVAL is the file system refusing O_DIRECT; anything else is the open's own failure.
    if (errno != EINVAL) return os_error("open", path, errno);
  }
  int fd = retry_eintr([&] { return ::open(path.c_str(), flags, 0600); });
  if (fd < 0) return os_error("open", path, errno);
  *direct = false;
  buffered_opens_.fetch_add(1);
  return fd;
}

Result<std::unique_ptr<WritableFile>> PosixFs::create(const std::string& path) {
  bool direct = false;
  auto fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC, &direct);
  if (!fd) return fd.error();
  // O_CREAT's mode applies only to a new file; a file we truncate keeps its mode unless told.
  if (::fchmod(*fd, 0600) != 0) {
    Status s = os_error("fchmod", path, errno);
    ::close(*fd);
    return s;
  }
  return std::unique_ptr<WritableFile>(
      new PosixWritableFile(path, *fd, direct, alloc_blocks(kStageBytes), 0, 0));
}

// The size of an open file; on failure the descriptor is closed (the caller returns at once).
static Result<uint64_t> size_or_close(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = os_error("fstat", path, errno);
    ::close(fd);
    return s;
  }
  return uint64_t(st.st_size);
}

Result<std::unique_ptr<WritableFile>> PosixFs::open_append(const std::string& path) {
  bool direct = false;
  // Read access too: with O_DIRECT the partial last block is read back into the stage.
  auto fd = open_file(path, O_RDWR, &direct);
  if (!fd) return fd.error();
  auto sized = size_or_close(*fd, path);
  if (!sized) return sized.error();
  const uint64_t size = *sized;
  BlockBuffer stage = alloc_blocks(kStageBytes);
  uint64_t written = size;
  size_t staged = 0;
  if (direct && !aligned(size)) {
    written = round_down(size);
    staged = size_t(size - written);
    auto r = pread_full(*fd, stage.get(), kBlock, written, true, path);
    Status s = !r ? r.error() : (*r < staged ? os_error("pread", path, EIO) : Status::ok());
    if (!s.is_ok()) {
      ::close(*fd);
      return s;
    }
  }
  return std::unique_ptr<WritableFile>(
      new PosixWritableFile(path, *fd, direct, std::move(stage), written, staged));
}

Result<std::unique_ptr<ReadableFile>> PosixFs::open_read(const std::string& path) {
  bool direct = false;
  auto fd = open_file(path, O_RDONLY, &direct);
  if (!fd) return fd.error();
  auto size = size_or_close(*fd, path);
  if (!size) return size.error();
  return std::unique_ptr<ReadableFile>(new PosixReadableFile(path, *fd, direct, *size));
}

Status PosixFs::rename(const std::string& from, const std::string& to) {
  if (retry_eintr([&] { return ::rename(from.c_str(), to.c_str()); }) != 0)
    return os_error("rename", from + " -> " + to, errno);
  return Status::ok();
}

Status PosixFs::remove(const std::string& path) {
  if (retry_eintr([&] { return ::unlink(path.c_str()); }) != 0)
    return os_error("unlink", path, errno);
  return Status::ok();
}

Status PosixFs::create_dir(const std::string& path) {
  const std::string p = without_trailing_slashes(path);
  if (p.empty()) return Status::invalid_argument("create_dir: empty path");
  // Parents first, each 0700 when we create it; parents that exist keep their mode (/tmp).
  for (size_t i = 1; i <= p.size(); ++i) {
    if (i != p.size() && p[i] != '/') continue;
    const std::string prefix = p.substr(0, i);
    if (::mkdir(prefix.c_str(), 0700) == 0) continue;
    if (errno != EEXIST) return os_error("mkdir", prefix, errno);
    struct stat st;
    if (::stat(prefix.c_str(), &st) != 0) return os_error("stat", prefix, errno);
    if (!S_ISDIR(st.st_mode)) return os_error("mkdir", prefix, ENOTDIR);
  }
  // The cache directory itself is private whatever it was (and whatever the umask did).
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return os_error("stat", p, errno);
  if ((st.st_mode & 07777) != 0700 && ::chmod(p.c_str(), 0700) != 0)
    return os_error("chmod", p, errno);
  return Status::ok();
}

Status PosixFs::sync_dir(const std::string& path) {
  int fd = retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return os_error("open", path, errno);
  Status s;
  if (retry_eintr([&] { return ::fsync(fd); }) != 0) s = os_error("fsync", path, errno);
  ::close(fd);
  return s;
}

Result<std::vector<std::string>> PosixFs::list(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return os_error("opendir", dir, errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (!e) break;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool regular = e->d_type == DT_REG;
    if (e->d_type == DT_UNKNOWN) {  // file systems that do not fill d_type
      struct stat st;
      regular =
          ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    }
    if (regular) names.push_back(name);
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return os_error("readdir", dir, err);
  return names;
}

Result<uint64_t> PosixFs::file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return os_error("stat", path, errno);
  return uint64_t(st.st_size);
}

bool PosixFs::exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<FsSpace> PosixFs::space(const std::string& dir) {
  struct statvfs v;
  if (retry_eintr([&] { return ::statvfs(dir.c_str(), &v); }) != 0)
    return os_error("statvfs", dir, errno);
  FsSpace s;
  s.available_bytes = uint64_t(v.f_bavail) * v.f_frsize;
  s.total_bytes = uint64_t(v.f_blocks) * v.f_frsize;
  return s;
}

namespace {

// flock(2) on an open descriptor: released when the descriptor closes, so also when the
// process dies (a crashed server never leaves its directory locked).
class PosixFileLock : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }

 private:
  int fd_;
};

}  // namespace

Result<std::unique_ptr<FileLock>> PosixFs::lock(const std::string& path) {
  const int fd =
      retry_eintr([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); });
  if (fd < 0) return os_error("open", path, errno);
  if (retry_eintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return Status::unavailable(path + " is locked by another process");
    return os_error("flock", path, err);
  }
  return std::unique_ptr<FileLock>(new PosixFileLock(fd));
}

}  // namespace anchorage::core

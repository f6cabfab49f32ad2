// PosixFs: the core::Fs on a real file system, and the only code in the tree that calls the OS
// for cache files (open, pread, pwrite, fsync, rename, unlink, mkdir, statvfs, opendir;
// tests/core/posix_fs_test.cc greps the tree for that).
//
// Cache files must not fill the page cache (the seed's "Disk tier": a 3 GB head read through
// the page cache evicts the model's own pages), so files are opened with O_DIRECT and every
// transfer goes through 4 KiB-aligned buffers:
//   - reads: a read whose offset, buffer address and length are all multiples of 4 KiB goes
//     straight into the caller's buffer; any other read goes through an aligned bounce buffer.
//   - writes: append() copies into a 4 KiB-aligned staging buffer and writes it out in whole
//     blocks. At sync() and close() the partial last block is written padded with zeros and
//     the file is ftruncate()d to its true length; the partial block stays staged, so a later
//     append rewrites that block whole (offsets stay aligned). We pad rather than reopen
//     without O_DIRECT for the tail: one descriptor, one code path, and the padding never
//     outlives the ftruncate that follows it in the same call — unless the process dies
//     between the two, which leaves up to 4 KiB of zeros after the last append: harmless for a
//     `.tmp` (deleted at start), a torn tail for an append-only file's reader.
// Where the file system refuses O_DIRECT (EINVAL at open: tmpfs before Linux 6.6, some FUSE
// file systems) the file is used buffered, and posix_fadvise(POSIX_FADV_DONTNEED) drops its
// pages after every sync and read, for the same reason.
//
// Errors: EINTR is retried; ENOENT is Status::not_found; anything else is an io_error naming
// the operation, the path and strerror (never file contents). Files are created 0600 and
// directories 0700.
//
// Threading: PosixFs is thread-safe. A ReadableFile may be read from several threads at once;
// a WritableFile belongs to one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"

namespace anchorage::core {

struct PosixFsOptions {
  // Open files with O_DIRECT where the file system allows it (off: always buffered + fadvise).
  bool direct_io = true;
  // Tests: act as if every O_DIRECT open failed with EINVAL, so the buffered fallback runs on
  // any file system (tmpfs has accepted O_DIRECT since Linux 6.6).
  bool test_refuse_direct_io = false;
};

class PosixFs : public Fs {
 public:
  explicit PosixFs(PosixFsOptions opts = {});
  ~PosixFs() override;

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

  // How many opens ended with O_DIRECT and how many fell back to buffered I/O (tests, stats).
  int64_t direct_opens() const { return direct_opens_.load(); }
  int64_t buffered_opens() const { return buffered_opens_.load(); }

  // The alignment of O_DIRECT transfers: offsets, buffer addresses and lengths.
  static constexpr size_t kBlockBytes = 4096;

 private:
  // open(2) with O_DIRECT when allowed, else without; sets *direct to what it got.
  Result<int> open_file(const std::string& path, int flags, bool* direct);

  PosixFsOptions opts_;
  std::atomic<int64_t> direct_opens_{0};
  std::atomic<int64_t> buffered_opens_{0};
};

}  // namespace anchorage::core

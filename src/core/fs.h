// core::Fs: the one seam through which every cache file is read and written (docs/style.md §1).
// The disk tier, the session spill and the suffix store take an `Fs&` and never open a file
// themselves: PosixFs is the only code that calls the OS (a test greps the tree for that),
// MemFs keeps files in memory for tests, FaultFs wraps either and injects failures, short
// writes and power cuts. Paths are plain '/'-separated strings; a directory is a path prefix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace anchorage::core {

// Reads at offsets. PosixFs opens with O_DIRECT where the file system allows it, so a caller
// that wants the fast path passes a 4 KiB-aligned buffer and offset (AlignedBuffer); any other
// read still works, through a bounce buffer.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Reads up to dst.size() bytes at `offset`; fewer only at the end of the file.
  virtual Result<size_t> read_at(uint64_t offset, std::span<std::byte> dst) = 0;
  virtual uint64_t size() const = 0;
};

// Appends. Nothing is durable until sync() returns OK. After a failed append or sync the file
// refuses every later call (the error is sticky: a writer never carries on over a hole).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status append(std::span<const std::byte> data) = 0;
  virtual Status sync() = 0;   // fsync (fdatasync is not enough for a new file's size)
  virtual Status close() = 0;  // idempotent; the destructor closes without syncing
  virtual uint64_t size() const = 0;
};

// Held while it lives: see Fs::lock.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

struct FsSpace {
  uint64_t available_bytes = 0;  // what an unprivileged writer may still use
  uint64_t total_bytes = 0;
};

class Fs {
 public:
  virtual ~Fs() = default;
  // Creates (or truncates) a file, mode 0600.
  virtual Result<std::unique_ptr<WritableFile>> create(const std::string& path) = 0;
  // Opens an existing file to append to it (the session spill's blocks).
  virtual Result<std::unique_ptr<WritableFile>> open_append(const std::string& path) = 0;
  virtual Result<std::unique_ptr<ReadableFile>> open_read(const std::string& path) = 0;
  // Atomic within one directory; replaces `to` if it exists.
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // NotFound when there is no such file.
  virtual Status remove(const std::string& path) = 0;
  // Creates the directory and its missing parents, mode 0700; OK when it exists. An existing
  // directory with a wider mode is narrowed to 0700 (cache files are private).
  virtual Status create_dir(const std::string& path) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status sync_dir(const std::string& path) = 0;
  // The names (not paths) of the regular files directly in `dir`, in no particular order.
  virtual Result<std::vector<std::string>> list(const std::string& dir) = 0;
  virtual Result<uint64_t> file_size(const std::string& path) = 0;
  virtual bool exists(const std::string& path) = 0;
  // The free and total space of the file system that holds `dir`.
  virtual Result<FsSpace> space(const std::string& dir) = 0;
  // An exclusive lock on `path` (created 0600 if missing), held until the returned object is
  // destroyed or the process dies: one process at a time owns a cache directory.
  // Unavailable when another holder has it.
  virtual Result<std::unique_ptr<FileLock>> lock(const std::string& path) = 0;
};

// The durability order every cache file is written in (docs/formats/disk-tier.md):
// `path.tmp`, write, fsync, rename to `path`, fsync the directory. A crash at any point leaves
// either no file or the whole file at `path` (and perhaps a `.tmp`, which remove_tmp_files
// deletes at start). `parts` are written back to back.
Status write_file_atomically(Fs& fs, const std::string& path,
                             std::span<const std::span<const std::byte>> parts);
Status write_file_atomically(Fs& fs, const std::string& path, std::span<const std::byte> data);

// Deletes every `*.tmp` file in `dir` (the leftovers of writes a crash interrupted); returns how
// many went.
Result<int> remove_tmp_files(Fs& fs, const std::string& dir);

// Joins a directory and a name with one '/'.
std::string path_join(const std::string& dir, const std::string& name);
// The directory part of a path ("." when there is none).
std::string path_dir(const std::string& path);

inline constexpr const char* kTmpSuffix = ".tmp";

}  // namespace anchorage::core

// BlobStore: where the disk tier keeps its files, by name (a content key and a kind suffix).
// The tier reads and writes through this interface only, so its first implementation, a local
// directory (LocalDirStore), can be joined by one that replicas share (Redis/Valkey, an object
// store) without a change above it: nothing here is a path.
//
// Every put is all or nothing: a reader sees the whole blob or none (the local directory's
// tmp-write-fsync-rename protocol). Thread-safe as the underlying store is (core::Fs is).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace anchorage::cache {

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // Writes the parts back to back as one blob, replacing any blob of that name.
  virtual core::Status put(const std::string& name,
                           std::span<const std::span<const std::byte>> parts) = 0;
  // NotFound when there is no such blob.
  virtual core::Result<std::unique_ptr<core::ReadableFile>> open(const std::string& name) = 0;
  virtual bool exists(const std::string& name) = 0;
  virtual core::Status remove(const std::string& name) = 0;
  // Every whole blob's name (never an unfinished write's).
  virtual core::Result<std::vector<std::string>> list() = 0;
  virtual core::Result<uint64_t> size(const std::string& name) = 0;
  // The free space the store's medium has left, when it has a notion of it (a local file
  // system does, a shared store's own budget is its own business).
  virtual std::optional<core::FsSpace> space() = 0;
};

// A directory on a core::Fs. Opening it creates the directory (0700) and deletes the `.tmp`
// files of writes a crash interrupted.
class LocalDirStore : public BlobStore {
 public:
  static core::Result<std::unique_ptr<LocalDirStore>> open(core::Fs& fs, const std::string& dir);

  core::Status put(const std::string& name,
                   std::span<const std::span<const std::byte>> parts) override;
  core::Result<std::unique_ptr<core::ReadableFile>> open(const std::string& name) override;
  bool exists(const std::string& name) override;
  core::Status remove(const std::string& name) override;
  core::Result<std::vector<std::string>> list() override;
  core::Result<uint64_t> size(const std::string& name) override;
  std::optional<core::FsSpace> space() override;

  const std::string& dir() const { return dir_; }
  int removed_tmp_files() const { return removed_tmp_; }

 private:
  LocalDirStore(core::Fs& fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}
  std::string path(const std::string& name) const { return core::path_join(dir_, name); }

  core::Fs& fs_;
  std::string dir_;
  int removed_tmp_ = 0;
};

}  // namespace anchorage::cache

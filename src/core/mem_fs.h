// MemFs: a core::Fs that keeps its files in memory, for tests. It models durability the way a
// power cut sees it: every file has the bytes written and the bytes synced, every directory
// its entries as seen and as synced, and power_cut() drops whatever was not made durable
// (the state a machine reboots into). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/fs.h"

namespace anchorage::core {

class MemFs : public Fs {
 public:
  MemFs();
  ~MemFs() override;

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

  // What survives a power cut: file contents as of their last sync, directory entries as of
  // their directory's last sync_dir. Open files keep working on the old inodes.
  void power_cut();
  // The file's bytes (tests flip them); empty when there is no such file.
  std::vector<std::byte>* mutable_contents(const std::string& path);
  // The space reported by space(); by default 1 TiB total, all free minus what files hold.
  void set_total_bytes(uint64_t bytes);

  struct Inode;

 private:
  struct Dir {
    std::map<std::string, std::shared_ptr<Inode>> entries;         // as seen now
    std::map<std::string, std::shared_ptr<Inode>> synced_entries;  // as of the last sync_dir
  };
  Dir* dir_of(const std::string& path, std::string* name);

  std::mutex mu_;
  std::map<std::string, Dir> dirs_;
  std::shared_ptr<std::set<std::string>> locked_ = std::make_shared<std::set<std::string>>();
  uint64_t total_bytes_;
};

}  // namespace anchorage::core

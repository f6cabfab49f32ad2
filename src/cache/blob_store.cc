#include "cache/blob_store.h"

namespace anchorage::cache {

core::Result<std::unique_ptr<LocalDirStore>> LocalDirStore::open(core::Fs& fs,
                                                                 const std::string& dir) {
  if (core::Status s = fs.create_dir(dir); !s.is_ok()) return s;
  std::unique_ptr<LocalDirStore> store(new LocalDirStore(fs, dir));
  auto removed = core::remove_tmp_files(fs, dir);
  if (!removed) return removed.error();
  store->removed_tmp_ = *removed;
  return store;
}

core::Status LocalDirStore::put(const std::string& name,
                                std::span<const std::span<const std::byte>> parts) {
  return core::write_file_atomically(fs_, path(name), parts);
}

core::Result<std::unique_ptr<core::ReadableFile>> LocalDirStore::open(const std::string& name) {
  return fs_.open_read(path(name));
}

bool LocalDirStore::exists(const std::string& name) {
  return fs_.exists(path(name));
}

core::Status LocalDirStore::remove(const std::string& name) {
  return fs_.remove(path(name));
}

core::Result<std::vector<std::string>> LocalDirStore::list() {
  auto names = fs_.list(dir_);
  if (!names) return names.error();
  const std::string tmp = core::kTmpSuffix;
  std::erase_if(*names, [&](const std::string& n) {
    return n.size() >= tmp.size() && n.compare(n.size() - tmp.size(), tmp.size(), tmp) == 0;
  });
  return names;
}

core::Result<uint64_t> LocalDirStore::size(const std::string& name) {
  return fs_.file_size(path(name));
}

std::optional<core::FsSpace> LocalDirStore::space() {
  auto s = fs_.space(dir_);
  if (!s) return std::nullopt;
  return *s;
}

}  // namespace anchorage::cache

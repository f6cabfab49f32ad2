#include "core/fs.h"

namespace anchorage::core {

std::string path_join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string path_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status write_file_atomically(Fs& fs, const std::string& path,
                             std::span<const std::span<const std::byte>> parts) {
  const std::string tmp = path + kTmpSuffix;
  auto file = fs.create(tmp);
  if (!file) return file.error();
  Status s;
  for (auto part : parts) {
    s = (*file)->append(part);
    if (!s.is_ok()) break;
  }
  if (s.is_ok()) s = (*file)->sync();
  // A failed close after a good sync loses nothing durable, but the write is still refused:
  // the file system said something went wrong.
  Status closed = (*file)->close();
  if (s.is_ok()) s = closed;
  if (s.is_ok()) s = fs.rename(tmp, path);
  if (!s.is_ok()) {
    Status removed = fs.remove(tmp);
    if (!removed.is_ok() && removed.code() != StatusCode::kNotFound)
      ignore_status(removed, "remove a .tmp after a failed write");
    return s;
  }
  return fs.sync_dir(path_dir(path));
}

Status write_file_atomically(Fs& fs, const std::string& path, std::span<const std::byte> data) {
  const std::span<const std::byte> parts[] = {data};
  return write_file_atomically(fs, path, parts);
}

Result<int> remove_tmp_files(Fs& fs, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names) return names.error();
  int removed = 0;
  const std::string suffix = kTmpSuffix;
  for (const auto& name : *names) {
    if (name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    Status s = fs.remove(path_join(dir, name));
    if (!s.is_ok() && s.code() != StatusCode::kNotFound) return s;
    if (s.is_ok()) ++removed;
  }
  if (removed > 0) {
    Status s = fs.sync_dir(dir);
    if (!s.is_ok()) return s;
  }
  return removed;
}

}  // namespace anchorage::core

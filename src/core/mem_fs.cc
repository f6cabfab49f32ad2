#include "core/mem_fs.h"

#include <algorithm>
#include <cstring>

namespace anchorage::core {

struct MemFs::Inode {
  std::mutex mu;
  std::vector<std::byte> bytes;
  std::vector<std::byte> synced;  // what a power cut leaves
};

namespace {

class MemWritableFile : public WritableFile {
 public:
  explicit MemWritableFile(std::shared_ptr<MemFs::Inode> inode) : inode_(std::move(inode)) {}
  Status append(std::span<const std::byte> data) override {
    if (closed_) return Status::io_error("append after close");
    std::lock_guard<std::mutex> lock(inode_->mu);
    inode_->bytes.insert(inode_->bytes.end(), data.begin(), data.end());
    return Status::ok();
  }
  Status sync() override {
    if (closed_) return Status::io_error("sync after close");
    std::lock_guard<std::mutex> lock(inode_->mu);
    inode_->synced = inode_->bytes;
    return Status::ok();
  }
  Status close() override {
    closed_ = true;
    return Status::ok();
  }
  uint64_t size() const override {
    std::lock_guard<std::mutex> lock(inode_->mu);
    return inode_->bytes.size();
  }

 private:
  std::shared_ptr<MemFs::Inode> inode_;
  bool closed_ = false;
};

class MemReadableFile : public ReadableFile {
 public:
  explicit MemReadableFile(std::shared_ptr<MemFs::Inode> inode) : inode_(std::move(inode)) {}
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> dst) override {
    std::lock_guard<std::mutex> lock(inode_->mu);
    if (offset >= inode_->bytes.size()) return size_t{0};
    size_t n = std::min<uint64_t>(dst.size(), inode_->bytes.size() - offset);
    std::memcpy(dst.data(), inode_->bytes.data() + offset, n);
    return n;
  }
  uint64_t size() const override {
    std::lock_guard<std::mutex> lock(inode_->mu);
    return inode_->bytes.size();
  }

 private:
  std::shared_ptr<MemFs::Inode> inode_;
};

std::string normalize(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

MemFs::MemFs() : total_bytes_(uint64_t{1} << 40) {
  dirs_["."];
  dirs_["/"];
}
MemFs::~MemFs() = default;

MemFs::Dir* MemFs::dir_of(const std::string& path, std::string* name) {
  std::string p = normalize(path);
  size_t slash = p.rfind('/');
  *name = slash == std::string::npos ? p : p.substr(slash + 1);
  auto it = dirs_.find(path_dir(p));
  return it == dirs_.end() ? nullptr : &it->second;
}

Result<std::unique_ptr<WritableFile>> MemFs::create(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir) return Status::not_found("no directory for " + path);
  auto inode = std::make_shared<Inode>();
  dir->entries[name] = inode;
  return std::unique_ptr<WritableFile>(new MemWritableFile(inode));
}

Result<std::unique_ptr<WritableFile>> MemFs::open_append(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir || !dir->entries.count(name)) return Status::not_found("no file " + path);
  return std::unique_ptr<WritableFile>(new MemWritableFile(dir->entries[name]));
}

Result<std::unique_ptr<ReadableFile>> MemFs::open_read(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir || !dir->entries.count(name)) return Status::not_found("no file " + path);
  return std::unique_ptr<ReadableFile>(new MemReadableFile(dir->entries[name]));
}

Status MemFs::rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string from_name, to_name;
  Dir* a = dir_of(from, &from_name);
  Dir* b = dir_of(to, &to_name);
  if (!a || !a->entries.count(from_name)) return Status::not_found("no file " + from);
  if (!b) return Status::not_found("no directory for " + to);
  auto inode = a->entries[from_name];
  a->entries.erase(from_name);
  b->entries[to_name] = inode;
  return Status::ok();
}

Status MemFs::remove(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir || !dir->entries.erase(name)) return Status::not_found("no file " + path);
  return Status::ok();
}

Status MemFs::create_dir(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string p = normalize(path);
  // Parents first; a directory in MemFs is durable at once (only file entries model syncs).
  for (size_t i = 1; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') dirs_[p.substr(0, i)];
  }
  return Status::ok();
}

Status MemFs::sync_dir(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dirs_.find(normalize(path));
  if (it == dirs_.end()) return Status::not_found("no directory " + path);
  it->second.synced_entries = it->second.entries;
  return Status::ok();
}

Result<std::vector<std::string>> MemFs::list(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dirs_.find(normalize(dir));
  if (it == dirs_.end()) return Status::not_found("no directory " + dir);
  std::vector<std::string> names;
  for (const auto& [name, inode] : it->second.entries) names.push_back(name);
  return names;
}

Result<uint64_t> MemFs::file_size(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir || !dir->entries.count(name)) return Status::not_found("no file " + path);
  auto& inode = dir->entries[name];
  std::lock_guard<std::mutex> l2(inode->mu);
  return uint64_t(inode->bytes.size());
}

bool MemFs::exists(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  return dir && dir->entries.count(name);
}

Result<FsSpace> MemFs::space(const std::string& /*dir: one file system*/) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t used = 0;
  for (auto& [path, d] : dirs_)
    for (auto& [name, inode] : d.entries) {
      std::lock_guard<std::mutex> l2(inode->mu);
      used += inode->bytes.size();
    }
  FsSpace s;
  s.total_bytes = total_bytes_;
  s.available_bytes = used >= total_bytes_ ? 0 : total_bytes_ - used;
  return s;
}

namespace {

class MemFileLock : public FileLock {
 public:
  MemFileLock(std::mutex* mu, std::shared_ptr<std::set<std::string>> locked, std::string path)
      : mu_(mu), locked_(std::move(locked)), path_(std::move(path)) {}
  ~MemFileLock() override {
    std::lock_guard<std::mutex> lock(*mu_);
    locked_->erase(path_);
  }

 private:
  std::mutex* mu_;
  std::shared_ptr<std::set<std::string>> locked_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<FileLock>> MemFs::lock(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!locked_->insert(path).second) return Status::unavailable(path + " is locked");
  return std::unique_ptr<FileLock>(new MemFileLock(&mu_, locked_, path));
}

void MemFs::power_cut() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [path, d] : dirs_) {
    d.entries = d.synced_entries;
    for (auto& [name, inode] : d.entries) {
      std::lock_guard<std::mutex> l2(inode->mu);
      inode->bytes = inode->synced;
    }
  }
}

std::vector<std::byte>* MemFs::mutable_contents(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name;
  Dir* dir = dir_of(path, &name);
  if (!dir || !dir->entries.count(name)) return nullptr;
  return &dir->entries[name]->bytes;
}

void MemFs::set_total_bytes(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  total_bytes_ = bytes;
}

}  // namespace anchorage::core

// MappedFile over mmap(2) or memory.
#include "model/gguf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace anchorage::model::gguf {

core::Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return core::Status::not_found(path + ": no such file");
    return core::Status::io_error(path + ": " + std::strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return core::Status::io_error(path + ": not a regular file");
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = size_t(st.st_size);
  if (f->size_ > 0) {
    void* p = mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return core::Status::io_error(path + ": mmap: " + std::strerror(e));
    }
    f->map_ = p;
    f->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file
  return std::shared_ptr<const MappedFile>(std::move(f));
}

std::shared_ptr<const MappedFile> MappedFile::from_bytes(std::string bytes) {
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->owned_ = std::move(bytes);
  f->data_ = reinterpret_cast<const uint8_t*>(f->owned_.data());
  f->size_ = f->owned_.size();
  return f;
}

std::shared_ptr<const MappedFile> MappedFile::view(const void* data, size_t size) {
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->data_ = static_cast<const uint8_t*>(data);
  f->size_ = size;
  return f;
}

void MappedFile::drop_resident_pages() const {
  // A read-only private mapping has no page of its own: MADV_DONTNEED unmaps page-cache pages,
  // and the next touch faults them back in from the cache (or the file).
  if (map_ != nullptr) (void)madvise(map_, size_, MADV_DONTNEED);
}

void MappedFile::prefetch(const void* p, size_t n) const {
  if (map_ == nullptr || n == 0) return;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = uintptr_t(p) & ~(page - 1);
  (void)madvise(reinterpret_cast<void*>(begin), uintptr_t(p) + n - begin, MADV_WILLNEED);
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) munmap(map_, size_);
}

}  // namespace anchorage::model::gguf

// MappedFile: the read-only bytes of a model file, memory-mapped (the weights of a large file
// are paged in on first touch and shared with the page cache), or bytes held in memory (tests,
// the fuzzer). The seam the GGUF reader reads through; it never opens a file itself.
// Immutable after creation; safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace anchorage::model::gguf {

class MappedFile {
 public:
  // Maps path read-only. NotFound when it does not exist, IOError for any other failure.
  static core::Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  // Takes the bytes (they move into the object: data() stays valid as long as it lives).
  static std::shared_ptr<const MappedFile> from_bytes(std::string bytes);
  // Views bytes owned by the caller, which must outlive the object (no copy: the fuzzer).
  static std::shared_ptr<const MappedFile> view(const void* data, size_t size);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }  // "" for in-memory bytes
  // Lets the kernel drop the mapping's pages from this process (they stay in the page cache,
  // and a later read maps them again): once the weights are packed, the process's resident
  // size stops counting the file twice. Safe while other threads read the bytes. No-op for
  // bytes in memory.
  void drop_resident_pages() const;
  // Asks the kernel to start reading bytes [p, p + n) of the mapping in (MADV_WILLNEED: it
  // returns once the reads are queued). A hint; no-op for bytes in memory.
  void prefetch(const void* p, size_t n) const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // mmap'ed region, when mapped
  std::string owned_;    // in-memory bytes, when owned
  std::string path_;
};

}  // namespace anchorage::model::gguf

// GgufFile: a parsed GGUF file (v2 or v3; docs/gguf.md) — its metadata, its tensor infos and a
// pointer to each tensor's bytes inside the mapped file. parse() checks every length against
// the bytes that remain before trusting it, so a truncated or corrupt file is an error naming
// what is wrong and where, never a crash or a huge allocation.
// Immutable after parse(); safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/gguf/gguf_value.h"
#include "model/gguf/mapped_file.h"

namespace anchorage::model::gguf {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // ne[0] is contiguous (a matrix's input dimension)
  uint32_t ggml_type = 0;
  uint64_t offset = 0;            // from the start of the data section
  int64_t n_bytes = 0;            // from the type's block size
  const uint8_t* data = nullptr;  // inside the mapped file

  int64_t elements() const;
  std::string shape_string() const;  // "{64, 512}"
};

class GgufFile {
 public:
  // Parses bytes. Corruption (bad magic, truncated, inconsistent, misaligned, past end,
  // unknown type, overflow) or Unsupported (version) with a message that names the part.
  static core::Result<GgufFile> parse(std::shared_ptr<const MappedFile> file);
  // MappedFile::open + parse; the errors name the path.
  static core::Result<GgufFile> open(const std::string& path);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const MappedFile& file() const { return *file_; }
  // The same, shared: what keeps the bytes of tensors read in place valid.
  const std::shared_ptr<const MappedFile>& shared_file() const { return file_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* tensor(std::string_view name) const;

  // Typed getters: NotFound names a missing key, Corruption a value of the wrong type.
  core::Result<std::string> get_string(std::string_view key) const;
  core::Result<int64_t> get_int(std::string_view key) const;
  core::Result<double> get_double(std::string_view key) const;
  // The value, or `fallback` when the key is absent (still an error when of the wrong type).
  core::Result<int64_t> get_int_or(std::string_view key, int64_t fallback) const;
  core::Result<double> get_double_or(std::string_view key, double fallback) const;

 private:
  std::shared_ptr<const MappedFile> file_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace anchorage::model::gguf

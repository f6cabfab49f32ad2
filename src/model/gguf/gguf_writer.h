// GgufWriter: builds a GGUF v3 file (docs/gguf.md) — metadata in the order added, tensor infos,
// and the data section with every tensor aligned. Used by `anchorage gguf-random` and tests.
// The tensor bytes are held until write; the file is written whole (tmp, then rename).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/gguf/gguf_value.h"

namespace anchorage::model::gguf {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  // Adds a key (a second add of the same key replaces the value, keeping its position).
  // "general.alignment" sets the alignment the data section uses (a u32 power of two).
  void add(const std::string& key, GgufValue v);
  // A tensor: ne[0] contiguous; bytes = the row-major data in ggml type `ggml_type`.
  void add_tensor(std::string name, std::vector<int64_t> ne, uint32_t ggml_type,
                  std::vector<uint8_t> bytes);

  // The whole file.
  std::string serialize() const;
  // Writes the file to path (through path + ".tmp" and a rename). IOError names the path.
  core::Status write_file(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t ggml_type;
    std::vector<uint8_t> bytes;
  };
  std::string header() const;  // everything before the data section, padded
  uint64_t alignment() const;
  uint32_t version_;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace anchorage::model::gguf

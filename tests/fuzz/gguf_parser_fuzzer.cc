// libFuzzer target: arbitrary bytes as a GGUF file. Whatever the bytes, GgufFile::parse
// returns a file or an error with a message, never crashes, hangs, reads out of bounds or
// allocates by a count the bytes cannot back; a parsed file's tensors lie inside it; the
// qwen35 config reader then returns a config or an error. Built with clang by
// tests/fuzz/tests.cmake and run for a bounded time by ctest, seeded with tests/corpus/gguf/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/check.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/qwen35_gguf_loader.h"

using anchorage::model::gguf::GgufFile;
using anchorage::model::gguf::GgufType;
using anchorage::model::gguf::MappedFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = GgufFile::parse(MappedFile::view(data, size));
  if (!f) {
    ANCHORAGE_CHECK(!f.error().message().empty());
    return 0;
  }
  for (const auto& [key, v] : f->metadata()) {
    (void)v.as_int();
    (void)v.as_double();
    if (v.type == GgufType::kArray && v.elem != GgufType::kString && v.elem != GgufType::kArray) {
      (void)v.as_int_array();
    }
  }
  for (const auto& t : f->tensors()) {
    ANCHORAGE_CHECK(t.data >= data && t.n_bytes >= 0);
    ANCHORAGE_CHECK(size_t(t.data - data) + size_t(t.n_bytes) <= size);
    ANCHORAGE_CHECK(f->tensor(t.name) != nullptr);
  }
  auto cfg = anchorage::model::gguf::qwen35_config_from_gguf(*f);
  if (cfg) {
    ANCHORAGE_CHECK(cfg->num_hidden_layers >= 1);
  } else {
    ANCHORAGE_CHECK(!cfg.error().message().empty());
  }
  return 0;
}

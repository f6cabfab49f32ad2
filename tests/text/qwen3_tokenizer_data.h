// The real Qwen3 tokenizer for the text tests: scripts/fetch_tokenizer.sh fetches it (make and
// scripts/deps.sh run that), CMake copies it to ANCHORAGE_DATA_DIR/qwen3/. Missing data makes
// the tests that need it fail with a message saying how to fetch it; they never skip.
// Loaded once per test binary; the function-local static makes that thread-safe.
#pragma once

#include <string>

#include "text/tokenizer.h"

namespace anchorage::text::testing {

inline std::string qwen3_data_path(const std::string& file) {
  return std::string(ANCHORAGE_DATA_DIR) + "/qwen3/" + file;
}

inline std::string source_path(const std::string& file) {
  return std::string(ANCHORAGE_SOURCE_DIR) + "/" + file;
}

// The tokenizer, or nullptr with *error saying why.
inline const Tokenizer* qwen3_tokenizer(std::string* error) {
  static const core::Result<Tokenizer> loaded =
      Tokenizer::load_file(qwen3_data_path("tokenizer.json"));
  if (!loaded) {
    *error = loaded.error().to_string() +
             " (run scripts/deps.sh, which fetches the tokenizer, then configure again)";
    return nullptr;
  }
  return &loaded.value();
}

}  // namespace anchorage::text::testing

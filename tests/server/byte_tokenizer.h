// A small byte-level tokenizer for unit tests that need one but not Qwen3's (which takes
// seconds to load): id b < 256 is the byte b, then the added tokens below. No merges.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace anchorage::server::testing {

inline constexpr int32_t kImEnd = 256;     // <|im_end|>, special
inline constexpr int32_t kThink = 257;     // <think>
inline constexpr int32_t kThinkEnd = 258;  // </think>
inline constexpr int32_t kToolCall = 259;  // <tool_call>
inline constexpr int32_t kToolEnd = 260;   // </tool_call>

inline const text::Tokenizer& byte_tokenizer() {
  static const text::Tokenizer tok = [] {
    text::TokenizerSpec spec;
    for (int b = 0; b < 256; ++b) spec.token_bytes.push_back(std::string(1, char(b)));
    const char* added[] = {"<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"};
    for (int i = 0; i < 5; ++i) {
      spec.token_bytes.push_back(added[i]);
      spec.added_tokens.push_back({added[i], 256 + i, i == 0});
    }
    auto t = text::Tokenizer::create(std::move(spec));
    if (!t) ADD_FAILURE() << t.error().to_string();
    return std::move(t.value());
  }();
  return tok;
}

// The ids of text, byte by byte, with the added tokens recognised.
inline std::vector<int32_t> byte_ids(const std::string& text) {
  return byte_tokenizer().encode(text);
}

}  // namespace anchorage::server::testing

// AddedTokenMatcher: finds the added tokens of a tokenizer.json (`<|im_start|>`, `<think>`,
// ...) in raw text before anything else runs, leftmost first and the longest at a position,
// as HF tokenizers' AddedVocabulary (Aho-Corasick, LeftmostLongest) does. Every added token
// is matched, special or not (split_special_tokens = false).
//
// Threading: immutable after construction; any thread may call find().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anchorage::text {

class AddedTokenMatcher {
 public:
  struct Token {
    std::string content;  // non-empty
    int32_t id;
  };
  struct Match {
    size_t pos;  // text.size() when nothing was found
    size_t n_bytes;
    int32_t id;
  };

  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<Token> tokens);

  // The first added token in text at or after from.
  Match find(std::string_view text, size_t from) const;

  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<Token> tokens_;  // by first byte, then longest first
  // tokens_[begin_[b], begin_[b + 1]) start with byte b.
  std::array<uint32_t, 257> begin_{};
};

}  // namespace anchorage::text

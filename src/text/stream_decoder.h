// StreamDecoder: turns generated token ids into text one token at a time, for streaming. A
// character can be split across tokens (an emoji's four bytes may come as two or four byte
// tokens), so it holds back an incomplete character until a later token completes it and
// emits only valid UTF-8. Bytes that can no longer become a character are replaced by U+FFFD
// as soon as that is certain. What push() and flush() emit, concatenated, is exactly
// Tokenizer::decode() of the same ids.
//
// Threading: one StreamDecoder per stream, used by one thread at a time. The Tokenizer must
// outlive it.
#pragma once

#include <cstdint>
#include <string>

namespace anchorage::text {

class Tokenizer;

class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false)
      : tokenizer_(&tokenizer), skip_special_tokens_(skip_special_tokens) {}

  // Appends to out the text that is complete once id is added (possibly nothing).
  void push(int32_t id, std::string* out);
  // Appends what is held back (an incomplete character becomes U+FFFD) and starts over.
  void flush(std::string* out);

  // Bytes held back for an incomplete character (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_tokens_;
  std::string pending_;
};

}  // namespace anchorage::text

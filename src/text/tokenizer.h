// Tokenizer: byte-level BPE from a Hugging Face tokenizer.json (Qwen2/Qwen3 family), text <->
// token ids. encode() runs, in HF tokenizers' order: added tokens are cut out of the raw text
// first (special or not: split_special_tokens = false); each stretch between them is NFC
// normalized when the file asks for it, split by the pre-tokenizer regex, and each piece is
// merged by BPE (with a cache of piece -> ids). decode() concatenates token bytes.
//
// Bytes that are not well-formed UTF-8 never reach the regex or the normalizer: each such
// byte is encoded alone as its single-byte token, and the valid text around it is encoded as
// if the bad bytes were a boundary. decode_bytes() gives the input back byte for byte.
//
// Threading: immutable after create() except the piece cache, which has its own locks; any
// number of threads may call the const methods at once. Movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "text/tokenizer_spec.h"

namespace anchorage::text {

struct BpeVocabRef;

class Tokenizer {
 public:
  // Reads and parses a tokenizer.json. NotFound / IOError when the file cannot be read, and
  // parse_tokenizer_json()'s errors.
  static core::Result<Tokenizer> load_file(const std::string& path);
  // Parses the text of a tokenizer.json.
  static core::Result<Tokenizer> from_json(std::string_view json_text);
  // From a GGUF file's vocabulary (text/bpe_vocab.h): spec_from_vocab()'s errors, then
  // create()'s.
  static core::Result<Tokenizer> from_vocab(const BpeVocabRef& vocab);
  // Builds the tables; BpeModel::create()'s errors, or a pre-tokenizer regex that does not
  // compile.
  static core::Result<Tokenizer> create(TokenizerSpec spec);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of text (any bytes).
  std::vector<int32_t> encode(std::string_view text) const;
  // Appends the ids of text to ids.
  void encode(std::string_view text, std::vector<int32_t>* ids) const;

  // The text of ids as valid UTF-8: bytes that do not form a character (a token that ends
  // inside one, or a lone byte token) become U+FFFD, as HF's decode and TextDecoder do. Ids
  // with no token (out of range, or the padding rows of a model's embedding) give nothing.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;
  // The raw bytes of ids, concatenated (decode_bytes(encode(x)) == x for NFC-stable x).
  std::string decode_bytes(std::span<const int32_t> ids) const;

  // The id of the added token whose content is exactly piece (e.g. "<|im_end|>"), else of the
  // vocabulary token whose bytes are exactly piece.
  std::optional<int32_t> token_id(std::string_view piece) const;
  // The raw bytes of id ("" for an id with no token).
  std::string_view token_bytes(int32_t id) const;
  // True for added tokens marked special (<|im_start|>, <|endoftext|>, ...).
  bool is_special(int32_t id) const;
  // True for every added token (special or not: <think>, <tool_call>, ...).
  bool is_added(int32_t id) const;
  // The vocabulary tokens (not added ones) made only of spaces, tabs and newlines, ascending:
  // the "glue" between a chat turn's parts (server/engine_caches.cc) and what an output
  // constraint lets a model write before a tool call (server/output_constraint.cc). Made by the
  // first call (thread-safe), then kept.
  const std::vector<int32_t>& whitespace_ids() const;
  // One more than the largest id, added tokens included (151,669 for Qwen3).
  int32_t vocab_size() const;

  // Pieces in the encode cache (tests and benchmarks).
  size_t test_cache_size() const;
  void test_clear_cache() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  void encode_valid(std::string_view text, std::vector<int32_t>* ids) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anchorage::text

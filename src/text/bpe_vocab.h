// BpeVocab: a byte-level BPE vocabulary as a GGUF file stores it (tokenizer.ggml.*: tokens,
// token types, "left right" merges, the pre-tokenizer name), and its conversion to and from
// the TokenizerSpec a tokenizer.json gives (docs/tokenizer.md "From a GGUF file"). The text
// layer knows nothing of GGUF: the caller points a BpeVocabRef at the file's arrays.
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "text/tokenizer_spec.h"

namespace anchorage::text {

// GGUF token types.
enum BpeTokenType : int32_t {
  kBpeTokenNormal = 1,  // a vocabulary piece in the byte-level alphabet
  kBpeTokenUnknown = 2,
  kBpeTokenControl = 3,      // an added special token (<|im_start|>), raw text
  kBpeTokenUserDefined = 4,  // an added non-special token (<think>, <tool_call>), raw text
  kBpeTokenUnused = 5,       // padding ([PAD151669]): no token
  kBpeTokenByte = 6,
};

struct BpeVocab {
  std::vector<std::string> tokens;   // by id
  std::vector<int32_t> token_types;  // by id; empty = every token normal
  std::vector<std::string> merges;   // by rank, "left right" in the byte-level alphabet
  std::string pre;                   // tokenizer.ggml.pre: "qwen2" or "qwen35"
};

// A vocabulary's arrays where they already are (a GGUF file's, or a BpeVocab's), so that
// reading one copies no token: 300k strings of a GGUF vocabulary were copied twice before the
// spec was built (docs/performance.md "Start-up"). The strings are views (a parsed GGUF file
// holds its string arrays as views of the mapped file); the arrays must outlive the ref.
struct BpeVocabRef {
  std::span<const std::string_view> tokens;
  std::span<const int32_t> token_types;  // empty = every token normal
  std::span<const std::string_view> merges;
  std::string_view pre;

  BpeVocabRef() = default;
  // Views of v's strings, held by the ref (and its copies); v must outlive them.
  BpeVocabRef(const BpeVocab& v);  // NOLINT: a BpeVocab is read through its ref

 private:
  std::shared_ptr<const std::vector<std::string_view>> views_;  // v's tokens, then its merges
};

// The spec of a vocabulary. InvalidArgument names the bad token or merge; Unsupported names a
// pre-tokenizer or token type we do not implement. Both known pre-tokenizers NFC-normalize,
// as the tokenizer.json files they come from do.
core::Result<TokenizerSpec> spec_from_vocab(const BpeVocabRef& v);

// The vocabulary of a spec (what a converter writes), padded with unused "[PADn]" tokens to
// `n_tokens` entries when that is larger than the spec's ids.
BpeVocab vocab_from_spec(const TokenizerSpec& spec, const std::string& pre, int64_t n_tokens);

// The split regex of a GGUF pre-tokenizer name, or "" for one we do not know.
std::string pre_tokenizer_pattern(std::string_view pre);

}  // namespace anchorage::text

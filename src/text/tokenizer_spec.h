// TokenizerSpec: what a Hugging Face tokenizer.json says, checked and reduced to the parts a
// byte-level BPE tokenizer needs. parse_tokenizer_json() fills it; Tokenizer::create() builds
// the tables from it (tests also build small ones by hand).
//
// Supported (everything else is a clear Unsupported error, never a silent difference):
//   normalizer     null | NFC | Sequence of NFC
//   pre_tokenizer  Sequence[Split{Regex, Isolated, invert false}, ByteLevel{use_regex false,
//                  add_prefix_space false}] | ByteLevel{use_regex true} (the GPT-2 split) |
//                  Split{...} alone
//   model          BPE without dropout, byte fallback, unk, prefix or suffix; vocab keys in the
//                  byte-level alphabet; merges as "a b" strings or ["a", "b"] pairs
//   decoder        null | ByteLevel;   post_processor null | ByteLevel (adds nothing)
//   added_tokens   without lstrip, rstrip or single_word
// Plain data (move-only); no threading concerns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "text/piece_index.h"
#include "text/token_bytes.h"

namespace anchorage::text {

struct AddedTokenSpec {
  std::string content;  // matched and decoded as these bytes
  int32_t id = 0;
  bool special = false;  // decode(..., skip_special_tokens) drops it
};

struct TokenizerSpec {
  TokenBytes token_bytes;                           // by id, raw bytes; "" = no such id
  std::vector<std::pair<int32_t, int32_t>> merges;  // by rank
  // token_bytes's index (text/vocab_resolve.h), built by the readers, which need it for the
  // merges, and handed to the tokenizer; empty in a spec built by hand (BpeModel builds it).
  // Move-only, so the spec is: a copy would view the original's bytes.
  PieceIndex bytes_index;
  std::vector<AddedTokenSpec> added_tokens;
  std::string split_pattern;   // the pre-tokenizer regex; "" = the whole text is one piece
  bool nfc = false;            // the NFC normalizer
  bool ignore_merges = false;  // a piece that is a whole token skips the merges
};

// A merge in its "left right" string form (tokenizer.json's older form, GGUF's only one): false
// unless it holds exactly one space.
inline bool split_merge(std::string_view merge, std::string_view* left, std::string_view* right) {
  const size_t space = merge.find(' ');
  if (space == std::string_view::npos || merge.find(' ', space + 1) != std::string_view::npos)
    return false;
  *left = merge.substr(0, space);
  *right = merge.substr(space + 1);
  return true;
}

// Parses the text of a tokenizer.json. InvalidArgument for malformed JSON or a field of the
// wrong shape (the message names the field), Unsupported for a feature we do not implement.
core::Result<TokenizerSpec> parse_tokenizer_json(std::string_view json_text);

}  // namespace anchorage::text

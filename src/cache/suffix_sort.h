// sort_token_suffixes: the suffix array of a sequence of token ids, built with libdivsufsort
// (Debian's libdivsufsort-dev), which sorts bytes only. Each token is written as 3 big-endian
// bytes, so the byte suffixes that start on a token's first byte sort exactly as the token
// suffixes do (a fixed width and big-endian keep the order of the values, and a shorter suffix
// that is a prefix of a longer one sorts first in both); the others are dropped. The byte
// string is 3 bytes a token, so divsufsort's 32-bit index serves up to ~715 M tokens and
// divsufsort64 serves beyond (docs/suffix-store.md "Building the index").
//
// Peak memory while sorting: 3 bytes a token for the bytes and 12 (32-bit) or 24 (64-bit)
// bytes a token for the byte suffix array; then the bytes go and the 4 bytes a token of the
// result are filled from the byte suffix array.
// Thread-safe (no shared state); slow (seconds at 48 M tokens): never on an engine thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace anchorage::cache {

// Token ids must stay below this: 3 bytes a token (Qwen3's vocabulary has ~152 k ids).
inline constexpr uint32_t kMaxSortableToken = (1u << 24) - 1;

// The start positions of text's suffixes in lexicographic order of their token sequences.
// InvalidArgument when a token is over kMaxSortableToken or the text has 2^32 tokens or more;
// ResourceExhausted when libdivsufsort fails (it fails only on allocation).
// `force_64bit` uses divsufsort64 whatever the size (tests of the large-store path).
core::Result<std::vector<uint32_t>> sort_token_suffixes(std::span<const uint32_t> text,
                                                        bool force_64bit = false);

}  // namespace anchorage::cache

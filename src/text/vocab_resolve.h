// What both tokenizer readers (tokenizer.json, a GGUF file's vocabulary) do once they have a
// vocabulary's raw bytes by id: index them (the one index the tokenizer keeps: BpeModel takes
// it over through TokenizerSpec::bytes_index), and turn merges written as byte-level pieces into
// id pairs through it. One index of 150k keys where there were two (one of byte-level pieces to
// resolve the merges, one of raw bytes in BpeModel): docs/performance.md "Start-up".
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "text/piece_index.h"
#include "text/token_bytes.h"

namespace anchorage::text {

// Every non-empty entry of bytes -> its id, into *index (which views bytes: bytes must stay in
// place while it is used). InvalidArgument "<field>: ids A and B have the same bytes", or
// "<field>[id]: longer than 65535 bytes" (PieceIndex::kMaxKeyBytes).
core::Status index_token_bytes(const TokenBytes& bytes, std::string_view field, PieceIndex* index);

// Appends the raw bytes of a merge's half, written in the byte-level alphabet, to halves; an
// empty entry, which names no token, when piece is not in that alphabet.
void push_merge_half(std::string_view piece, TokenBytes* halves);

// halves holds the left then the right half of every merge in rank order (push_merge_half);
// *merges gets their ids. InvalidArgument "<field>[rank]: token not in the vocabulary" for a
// half that is not one of index's tokens.
core::Status resolve_merges(const TokenBytes& halves, const PieceIndex& index,
                            std::string_view field,
                            std::vector<std::pair<int32_t, int32_t>>* merges);

}  // namespace anchorage::text

// BpeModel: the byte-level BPE model of a tokenizer.json (`model.type == "BPE"`): a
// vocabulary of byte strings and a ranked list of merges. encode_piece() turns one
// pre-tokenized piece into ids: start from one token per byte, then merge, again and again,
// the adjacent pair with the lowest merge rank, the leftmost one on a tie (what HF tokenizers'
// `Word::merge_all` and transformers.js do).
//
// Threading: immutable after create(); any number of threads may call the const methods.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/huge_page_array.h"
#include "core/status.h"
#include "text/piece_index.h"
#include "text/token_bytes.h"

namespace anchorage::text {

class BpeModel {
 public:
  // token_bytes[id] holds the raw bytes of token id ("" for an id with no token); merges are
  // (left id, right id) in rank order. index, when not empty, is index_token_bytes()'s index of
  // these token_bytes (a reader that resolved merges built it already); else create() builds
  // it. InvalidArgument when a byte has no single-byte token, two ids share their bytes, a
  // merge names a missing id or its result is not in the vocabulary. A pair listed twice keeps
  // its last rank, as HF tokenizers does.
  static core::Result<BpeModel> create(TokenBytes token_bytes,
                                       const std::vector<std::pair<int32_t, int32_t>>& merges,
                                       bool ignore_merges, PieceIndex index = PieceIndex());

  BpeModel(BpeModel&&) noexcept = default;  // keeps id_of_bytes_'s views valid
  BpeModel& operator=(BpeModel&&) noexcept = default;
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of piece (non-empty bytes) to ids.
  void encode_piece(std::string_view piece, std::vector<int32_t>* ids) const;

  // The id whose bytes are exactly bytes.
  std::optional<int32_t> find(std::string_view bytes) const;

  // The raw bytes of id, "" when id has no token.
  std::string_view token_bytes(int32_t id) const;

  // One more than the largest id.
  int32_t size() const { return static_cast<int32_t>(token_bytes_.size()); }

  // Test hooks: the two merge loops encode_piece() picks between by length. Both merge ids
  // (one id per byte on entry) in place.
  void test_merge_by_scan(std::vector<int32_t>* ids) const {
    std::vector<Merge> pairs(ids->size());
    ids->resize(merge_by_scan(ids->data(), ids->size(), pairs.data()));
  }
  void test_merge_by_heap(std::vector<int32_t>* ids) const { merge_by_heap(ids); }

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  // Open addressing on (left << 32 | right) + 1; a probe stops at an empty slot, key 0 (so a
  // new table is fresh zero pages, never filled). Ids are non-negative: the + 1 never wraps.
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmptyKey = 0;
  // Up to this many bytes the scan loop wins: it keeps the pair ranks in a small array on the
  // stack and finds the lowest by a linear scan. Longer pieces (long runs of spaces,
  // punctuation or one word) take the heap: O(n log n) instead of O(n^2).
  static constexpr size_t kScanMaxBytes = 48;

  BpeModel() = default;
  const Merge* lookup(int32_t left, int32_t right) const;
  void insert(int32_t left, int32_t right, Merge merge);
  // Merges ids[0, n) in place and returns the new count; pairs has room for n merges.
  size_t merge_by_scan(int32_t* ids, size_t n, Merge* pairs) const;
  void merge_by_heap(std::vector<int32_t>* ids) const;

  TokenBytes token_bytes_;
  PieceIndex id_of_bytes_;  // views of token_bytes_'s entries, which stay put when it is moved
  int32_t byte_id_[256] = {};
  core::HugePageArray<Slot> slots_;  // on huge pages: megabytes read at random
  int slot_bits_ = 0;
  bool ignore_merges_ = false;
};

}  // namespace anchorage::text

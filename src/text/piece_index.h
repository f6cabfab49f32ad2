// PieceIndex: a token's bytes -> its id, over strings the caller keeps alive and in place. A
// vocabulary loads 150k pieces and its merges look up 300k more, each a cache miss in a table
// of megabytes; std::unordered_map's node per entry and chain walk were the largest part of a
// tokenizer load (docs/performance.md "Start-up"). Open addressing in one array, XXH3 hashes,
// load at most three quarters, and batch forms that prefetch the slots of keys ahead. An empty
// slot is all zero bits, so a new table is the fresh zero pages of an anonymous mapping, never
// filled (8 MB a vocabulary: a memset was a tenth of a tokenizer's load at start-up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/huge_page_array.h"
#include "text/token_bytes.h"

namespace anchorage::text {

class PieceIndex {
 public:
  explicit PieceIndex(size_t expected = 0);

  // The longest key an index holds (a longer one is never found; inserting one is a bug: the
  // readers refuse such a token first).
  static constexpr size_t kMaxKeyBytes = UINT16_MAX;

  // Adds keys[i] -> ids[i] (ids >= 0) in order; the first key already there stops it, leaving
  // it and the keys after it out. Returns that key's index (and *existing, when given, the id it
  // has), or keys.size() when every key went in.
  size_t insert_many(std::span<const std::string_view> keys, std::span<const int32_t> ids,
                     int32_t* existing = nullptr);
  // Adds every non-empty entry i of keys -> id i, the same way (the entries are the keys: keys
  // must outlive the index and stay in place).
  size_t insert_entries(const TokenBytes& keys, int32_t* existing = nullptr);

  // The id of key, or -1.
  int32_t find(std::string_view key) const;
  // ids[i] = find(keys[i]) for every i.
  void find_many(std::span<const std::string_view> keys, std::span<int32_t> ids) const;
  void find_many(const TokenBytes& keys, std::span<int32_t> ids) const;
  // The same, the first half of a large batch on a thread started for the call (the lookups only
  // read the index): a load's 150k-300k lookups, when nothing else runs on the machine's cores
  // (a server's start: docs/tokenizer.md "Two threads").
  void find_many_two_threads(const TokenBytes& keys, std::span<int32_t> ids) const;

  size_t size() const { return used_; }

 private:
  // 16 bytes (a 150k vocabulary's table is 4 MB): the key's bytes, its size, 16 bits of its hash
  // that home() does not use (a probe past another key rarely reads that key's bytes).
  struct Slot {
    const char* data;
    uint16_t size;
    uint16_t tag;
    int32_t id_plus_1;  // 0: an empty slot (all of it zero)
  };
  size_t home(uint64_t hash) const { return size_t(hash >> (64 - bits_)); }
  static uint16_t tag_of(uint64_t hash) { return uint16_t(hash); }
  void reserve(size_t n);  // room for n entries in all without growing
  bool insert_hashed(std::string_view key, uint64_t hash, int32_t id, int32_t* existing);
  int32_t find_hashed(std::string_view key, uint64_t hash) const;
  template <typename Keys>
  size_t insert_batch(const Keys& keys, int32_t* existing);
  template <typename Keys>
  void find_batch(const Keys& keys, std::span<int32_t> ids) const;

  core::HugePageArray<Slot> slots_;  // on huge pages: megabytes read at random
  size_t used_ = 0;
  int bits_ = 0;
};

}  // namespace anchorage::text

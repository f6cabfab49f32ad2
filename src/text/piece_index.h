// PieceIndex: a token's bytes -> its id, over strings the caller keeps alive and in place. A
// vocabulary loads 150k pieces and its merges look up 300k more, each a cache miss in a table
// of megabytes; std::unordered_map's node per entry and chain walk were the largest part of a
// tokenizer load (docs/performance.md "Start-up"). Open addressing in one array, XXH3 hashes,
// load at most three quarters, and batch forms that prefetch the slots of keys ahead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/huge_page_array.h"

namespace anchorage::text {

class PieceIndex {
 public:
  explicit PieceIndex(size_t expected = 0);

  // Adds keys[i] -> ids[i] (ids >= 0) in order; the first key already there stops it, leaving
  // it and the keys after it out. Returns that key's index (and *existing, when given, the id it
  // has), or keys.size() when every key went in.
  size_t insert_many(std::span<const std::string_view> keys, std::span<const int32_t> ids,
                     int32_t* existing = nullptr);

  // The id of key, or -1.
  int32_t find(std::string_view key) const;
  // ids[i] = find(keys[i]) for every i.
  void find_many(std::span<const std::string_view> keys, std::span<int32_t> ids) const;

  size_t size() const { return used_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    const char* data = nullptr;
    uint32_t size = 0;
    int32_t id = -1;  // -1: empty
  };
  size_t home(uint64_t hash) const { return size_t(hash >> (64 - bits_)); }
  void reserve(size_t n);  // room for n entries in all without growing
  bool insert_hashed(std::string_view key, uint64_t hash, int32_t id, int32_t* existing);
  int32_t find_hashed(std::string_view key, uint64_t hash) const;

  core::HugePageArray<Slot> slots_;  // on huge pages: megabytes read at random
  size_t used_ = 0;
  int bits_ = 0;
};

}  // namespace anchorage::text

// BpeCache: remembers the BPE ids of pre-tokenized pieces, since text repeats its words.
// Sharded by the piece's hash, each shard behind its own mutex. A shard is one flat
// open-addressing table whose entries point into one byte arena (the piece's bytes, then its
// ids), so a lookup touches two cache lines and allocates nothing. A shard that fills up is
// emptied and starts again: prompts reuse a small working set, so a reset keeps the hit rate
// high without LRU bookkeeping.
//
// Threading: any number of threads may call the const methods at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/aligned_buffer.h"

namespace anchorage::text {

class BpeCache {
 public:
  // Pieces longer than this are not cached (they rarely repeat and would use much memory).
  static constexpr size_t kMaxPieceBytes = 64;

  // capacity_pieces: how many pieces all shards hold together before they reset.
  explicit BpeCache(size_t capacity_pieces = size_t{1} << 16);
  ~BpeCache();

  // Appends the cached ids of piece to ids; false when piece is not cached.
  bool find(std::string_view piece, std::vector<int32_t>* ids) const;
  void insert(std::string_view piece, const int32_t* ids, size_t n_ids) const;

  size_t size() const;
  void clear() const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard;
  // Every shard's table, one slice each: one anonymous mapping of fresh zero pages (an empty
  // slot is zero bits), touched where a piece is first cached. 16 tables of 256 KiB each had
  // been filled at construction: 5 ms of a tokenizer's load at a server's start.
  core::AlignedBuffer tables_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace anchorage::text

#include "text/bpe_cache.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>

#include "core/check.h"

namespace anchorage::text {

namespace {

// A fast 64-bit hash of a short string: 8 bytes at a time, each mixed by a multiply and a
// shift (the mixing of splitmix64). Good enough to spread pieces over shards and slots.
uint64_t hash_piece(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = s.size() * kMul;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 29;
  return h | 1;  // 0 marks an empty slot
}

}  // namespace

struct BpeCache::Shard {
  struct Entry {
    uint64_t hash;    // 0: empty
    uint32_t offset;  // into arena: the piece's bytes, then its ids
    uint16_t n_bytes;
    uint16_t n_ids;
  };
  std::mutex mu;
  std::span<Entry> table;  // a power of two, at most half full; its slice of tables_
  std::string arena;
  size_t n_entries = 0;
  size_t max_entries = 0;

  void reset() {
    std::fill(table.begin(), table.end(), Entry{0, 0, 0, 0});
    arena.clear();
    n_entries = 0;
  }
};

BpeCache::BpeCache(size_t capacity_pieces) : shards_(new Shard[kShards]) {
  size_t slots = 16;
  while (slots < 2 * (capacity_pieces / kShards + 1)) slots *= 2;
  static_assert(std::is_trivially_copyable_v<Shard::Entry>);
  tables_ = core::AlignedBuffer(kShards * slots * sizeof(Shard::Entry));  // zero bits
  for (size_t i = 0; i < kShards; ++i) {
    shards_[i].table = std::span<Shard::Entry>(tables_.as<Shard::Entry>() + i * slots, slots);
    shards_[i].max_entries = slots / 2;
  }
}

BpeCache::~BpeCache() = default;

bool BpeCache::find(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.size() > kMaxPieceBytes) return false;
  const uint64_t h = hash_piece(piece);
  Shard& s = shards_[h >> 60];
  std::lock_guard<std::mutex> lock(s.mu);
  const size_t mask = s.table.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Shard::Entry& e = s.table[i];
    if (e.hash == 0) return false;
    if (e.hash == h && e.n_bytes == piece.size() &&
        std::memcmp(s.arena.data() + e.offset, piece.data(), piece.size()) == 0) {
      const size_t first = ids->size();
      ids->resize(first + e.n_ids);
      std::memcpy(ids->data() + first, s.arena.data() + e.offset + e.n_bytes,
                  e.n_ids * sizeof(int32_t));
      return true;
    }
  }
}

void BpeCache::insert(std::string_view piece, const int32_t* ids, size_t n_ids) const {
  if (piece.size() > kMaxPieceBytes) return;
  ANCHORAGE_CHECK(n_ids <= piece.size());  // BPE never makes more ids than bytes
  const uint64_t h = hash_piece(piece);
  Shard& s = shards_[h >> 60];
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.n_entries >= s.max_entries) s.reset();
  const size_t mask = s.table.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const Shard::Entry& e = s.table[i];
    if (e.hash == 0) break;
    if (e.hash == h && e.n_bytes == piece.size() &&
        std::memcmp(s.arena.data() + e.offset, piece.data(), piece.size()) == 0) {
      return;  // another thread cached it first
    }
  }
  const auto offset = static_cast<uint32_t>(s.arena.size());
  s.arena.append(piece);
  s.arena.append(reinterpret_cast<const char*>(ids), n_ids * sizeof(int32_t));
  s.table[i] =
      Shard::Entry{h, offset, static_cast<uint16_t>(piece.size()), static_cast<uint16_t>(n_ids)};
  ++s.n_entries;
}

size_t BpeCache::size() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    n += shards_[i].n_entries;
  }
  return n;
}

void BpeCache::clear() const {
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    shards_[i].reset();
  }
}

}  // namespace anchorage::text

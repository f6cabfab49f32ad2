#include "text/piece_index.h"

#include <climits>
#include <cstring>

#include <xxhash.h>

#include "core/check.h"

namespace anchorage::text {

namespace {

// How many keys ahead the batch forms prefetch a slot: enough misses in flight to cover a
// memory latency at a few ns of work per key.
constexpr size_t kAhead = 16;

uint64_t hash_of(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

std::vector<uint64_t> hashes_of(std::span<const std::string_view> keys) {
  std::vector<uint64_t> h(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) h[i] = hash_of(keys[i]);
  return h;
}

}  // namespace

PieceIndex::PieceIndex(size_t expected) {
  bits_ = 4;
  reserve(expected);
}

void PieceIndex::reserve(size_t n) {
  int bits = bits_;
  while ((size_t{1} << bits) * 3 < n * 4) ++bits;  // load <= 3/4
  if (bits == bits_ && !slots_.empty()) return;
  core::HugePageArray<Slot> old = std::move(slots_);
  bits_ = bits;
  slots_ = core::HugePageArray<Slot>(size_t{1} << bits_, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id < 0) continue;
    size_t s = home(slot.hash);
    while (slots_[s].id >= 0) s = (s + 1) & mask;
    slots_[s] = slot;
  }
}

bool PieceIndex::insert_hashed(std::string_view key, uint64_t hash, int32_t id, int32_t* existing) {
  ANCHORAGE_CHECK(id >= 0 && key.size() <= UINT32_MAX);
  const size_t mask = slots_.size() - 1;
  for (size_t s = home(hash);; s = (s + 1) & mask) {
    Slot& slot = slots_[s];
    if (slot.id < 0) {
      slot = Slot{hash, key.data(), uint32_t(key.size()), id};
      ++used_;
      return true;
    }
    if (slot.hash == hash && slot.size == key.size() &&
        std::memcmp(slot.data, key.data(), key.size()) == 0) {
      if (existing != nullptr) *existing = slot.id;
      return false;
    }
  }
}

int32_t PieceIndex::find_hashed(std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t s = home(hash);; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id < 0) return -1;
    if (slot.hash == hash && slot.size == key.size() &&
        std::memcmp(slot.data, key.data(), key.size()) == 0) {
      return slot.id;
    }
  }
}

size_t PieceIndex::insert_many(std::span<const std::string_view> keys, std::span<const int32_t> ids,
                               int32_t* existing) {
  ANCHORAGE_CHECK(keys.size() == ids.size());
  reserve(used_ + keys.size());
  const std::vector<uint64_t> h = hashes_of(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kAhead < keys.size()) __builtin_prefetch(&slots_[home(h[i + kAhead])], 1);
    if (!insert_hashed(keys[i], h[i], ids[i], existing)) return i;
  }
  return keys.size();
}

int32_t PieceIndex::find(std::string_view key) const {
  return find_hashed(key, hash_of(key));
}

void PieceIndex::find_many(std::span<const std::string_view> keys, std::span<int32_t> ids) const {
  ANCHORAGE_CHECK(keys.size() == ids.size());
  const std::vector<uint64_t> h = hashes_of(keys);
  // Two stages ahead: the slot of key i + kAhead, then the bytes the slot of key i + kAhead / 2
  // points at (the compare reads them).
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kAhead < keys.size()) __builtin_prefetch(&slots_[home(h[i + kAhead])]);
    if (i + kAhead / 2 < keys.size()) {
      const Slot& ahead = slots_[home(h[i + kAhead / 2])];
      if (ahead.id >= 0) __builtin_prefetch(ahead.data);
    }
    ids[i] = find_hashed(keys[i], h[i]);
  }
}

}  // namespace anchorage::text

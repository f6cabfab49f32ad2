#include "text/piece_index.h"

#include <climits>
#include <cstring>
#include <future>

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

// The hashes of a batch's keys, each computed kAhead keys before its own turn (for the
// prefetch) and kept in a ring: no array of a hash per key.
template <typename Keys>
class HashesAhead {
 public:
  explicit HashesAhead(const Keys& keys) : keys_(keys) {
    for (size_t i = 0; i < kAhead && i < keys.size(); ++i) ring_[i] = hash_of(keys.key(i));
  }
  // Key i's hash; then key i + kAhead's is computed in its place. Called for i = 0, 1, ...
  uint64_t take(size_t i) {
    const uint64_t h = ring_[i % kAhead];
    if (i + kAhead < keys_.size()) ring_[i % kAhead] = hash_of(keys_.key(i + kAhead));
    return h;
  }
  // Key j's hash, for i < j <= i + kAhead (after take(i)).
  uint64_t peek(size_t j) const { return ring_[j % kAhead]; }

 private:
  const Keys& keys_;
  uint64_t ring_[kAhead];
};

// A batch's keys and ids, read the same way from views or from TokenBytes entries.
struct ViewKeys {
  std::span<const std::string_view> keys;
  std::span<const int32_t> ids;
  size_t size() const { return keys.size(); }
  std::string_view key(size_t i) const { return keys[i]; }
  bool skip(size_t) const { return false; }
  int32_t id(size_t i) const { return ids[i]; }
};

// Entries first .. first + count - 1 (count = entries.size() - first unless given).
struct EntryKeys {
  const TokenBytes& entries;
  size_t first = 0;
  size_t count = entries.size() - first;
  size_t size() const { return count; }
  std::string_view key(size_t i) const { return entries[first + i]; }
  bool skip(size_t i) const { return key(i).empty(); }  // "no such id"
  int32_t id(size_t i) const { return int32_t(first + i); }
};

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
  slots_ = core::HugePageArray<Slot>(size_t{1} << bits_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id_plus_1 == 0) continue;
    size_t s = home(hash_of(std::string_view(slot.data, slot.size)));
    while (slots_[s].id_plus_1 != 0) s = (s + 1) & mask;
    slots_[s] = slot;
  }
}

bool PieceIndex::insert_hashed(std::string_view key, uint64_t hash, int32_t id, int32_t* existing) {
  ANCHORAGE_CHECK(id >= 0 && id < INT32_MAX && key.size() <= kMaxKeyBytes);
  const size_t mask = slots_.size() - 1;
  const uint16_t tag = tag_of(hash);
  for (size_t s = home(hash);; s = (s + 1) & mask) {
    Slot& slot = slots_[s];
    if (slot.id_plus_1 == 0) {
      slot = Slot{key.data(), uint16_t(key.size()), tag, id + 1};
      ++used_;
      return true;
    }
    if (slot.tag == tag && slot.size == key.size() &&
        std::memcmp(slot.data, key.data(), key.size()) == 0) {
      if (existing != nullptr) *existing = slot.id_plus_1 - 1;
      return false;
    }
  }
}

int32_t PieceIndex::find_hashed(std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  const uint16_t tag = tag_of(hash);
  for (size_t s = home(hash);; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id_plus_1 == 0) return -1;
    if (slot.tag == tag && slot.size == key.size() &&
        std::memcmp(slot.data, key.data(), key.size()) == 0) {
      return slot.id_plus_1 - 1;
    }
  }
}

template <typename Keys>
size_t PieceIndex::insert_batch(const Keys& keys, int32_t* existing) {
  reserve(used_ + keys.size());
  HashesAhead<Keys> h(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t hash = h.take(i);
    if (i + kAhead < keys.size()) __builtin_prefetch(&slots_[home(h.peek(i + kAhead))], 1);
    if (keys.skip(i)) continue;
    if (!insert_hashed(keys.key(i), hash, keys.id(i), existing)) return i;
  }
  return keys.size();
}

template <typename Keys>
void PieceIndex::find_batch(const Keys& keys, std::span<int32_t> ids) const {
  ANCHORAGE_CHECK(keys.size() == ids.size());
  HashesAhead<Keys> h(keys);
  // Two stages ahead: the slot of key i + kAhead, then the bytes the slot of key i + kAhead / 2
  // points at (the compare reads them).
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t hash = h.take(i);
    if (i + kAhead < keys.size()) __builtin_prefetch(&slots_[home(h.peek(i + kAhead))]);
    if (i + kAhead / 2 < keys.size()) {
      const Slot& ahead = slots_[home(h.peek(i + kAhead / 2))];
      if (ahead.id_plus_1 != 0) __builtin_prefetch(ahead.data);
    }
    ids[i] = find_hashed(keys.key(i), hash);
  }
}

size_t PieceIndex::insert_many(std::span<const std::string_view> keys, std::span<const int32_t> ids,
                               int32_t* existing) {
  ANCHORAGE_CHECK(keys.size() == ids.size());
  return insert_batch(ViewKeys{keys, ids}, existing);
}

size_t PieceIndex::insert_entries(const TokenBytes& keys, int32_t* existing) {
  return insert_batch(EntryKeys{keys}, existing);
}

int32_t PieceIndex::find(std::string_view key) const {
  return find_hashed(key, hash_of(key));
}

void PieceIndex::find_many(std::span<const std::string_view> keys, std::span<int32_t> ids) const {
  find_batch(ViewKeys{keys, {}}, ids);
}

void PieceIndex::find_many(const TokenBytes& keys, std::span<int32_t> ids) const {
  find_batch(EntryKeys{keys}, ids);
}

void PieceIndex::find_many_two_threads(const TokenBytes& keys, std::span<int32_t> ids) const {
  ANCHORAGE_CHECK(keys.size() == ids.size());
  // Below this a thread's start is not worth it.
  constexpr size_t kMinBatch = size_t{1} << 14;
  if (keys.size() < kMinBatch) return find_many(keys, ids);
  const size_t half = keys.size() / 2;
  auto first = std::async(std::launch::async, [&] {
    find_batch(EntryKeys{keys, 0, half}, ids.first(half));
  });
  find_batch(EntryKeys{keys, half}, ids.subspan(half));
  first.get();
}

}  // namespace anchorage::text

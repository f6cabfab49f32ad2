#include "text/bpe_model.h"

#include <algorithm>
#include <climits>
#include <queue>

#include "core/check.h"
#include "core/page_populate.h"
#include "text/vocab_resolve.h"

namespace anchorage::text {

using core::Result;
using core::Status;

namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return ((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
          static_cast<uint32_t>(right)) +
         1;
}

size_t slot_of(uint64_t key, int bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

}  // namespace

Result<BpeModel> BpeModel::create(TokenBytes token_bytes,
                                  const std::vector<std::pair<int32_t, int32_t>>& merges,
                                  bool ignore_merges, PieceIndex index) {
  BpeModel m;
  m.ignore_merges_ = ignore_merges;
  m.token_bytes_ = std::move(token_bytes);
  const TokenBytes& bytes = m.token_bytes_;
  const auto n_ids = static_cast<int32_t>(bytes.size());
  if (index.size() == 0) {
    if (Status s = index_token_bytes(bytes, "model.vocab", &index); !s.is_ok()) return s;
  }
  m.id_of_bytes_ = std::move(index);
  std::fill(std::begin(m.byte_id_), std::end(m.byte_id_), -1);
  for (int32_t id = 0; id < n_ids; ++id) {
    if (bytes[id].size() == 1) m.byte_id_[static_cast<uint8_t>(bytes[id][0])] = id;
  }
  for (int b = 0; b < 256; ++b) {
    if (m.byte_id_[b] < 0) {
      return Status::invalid_argument("model.vocab: no token for byte " + std::to_string(b));
    }
  }
  // Every merge's joined bytes, then looked up as a batch.
  TokenBytes joined;
  joined.reserve(merges.size(), 2 * bytes.byte_size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto [left, right] = merges[rank];
    if (left < 0 || left >= n_ids || right < 0 || right >= n_ids || bytes[left].empty() ||
        bytes[right].empty()) {
      return Status::invalid_argument("model.merges[" + std::to_string(rank) +
                                      "]: names a token that is not in the vocabulary");
    }
    joined.push_back_joined(bytes[left], bytes[right]);
  }
  std::vector<int32_t> merged = core::populated_vector<int32_t>(merges.size());
  m.id_of_bytes_.find_many_two_threads(joined, merged);
  m.slot_bits_ = 4;
  while ((size_t{1} << m.slot_bits_) < merges.size() * 2) ++m.slot_bits_;  // load <= 1/2
  m.slots_ = core::HugePageArray<Slot>(size_t{1} << m.slot_bits_);
  // Each insert is a miss in a table of megabytes: the home slot of the merge 16 ranks on is
  // asked for first (as PieceIndex's batches do).
  constexpr size_t kAhead = 16;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    if (rank + kAhead < merges.size()) {
      const auto [l, r] = merges[rank + kAhead];
      __builtin_prefetch(&m.slots_[slot_of(pair_key(l, r), m.slot_bits_)], 1);
    }
    if (merged[rank] < 0) {
      return Status::invalid_argument("model.merges[" + std::to_string(rank) +
                                      "]: the merged token is not in the vocabulary");
    }
    m.insert(merges[rank].first, merges[rank].second,
             Merge{static_cast<int32_t>(rank), merged[rank]});
  }
  return m;
}

void BpeModel::insert(int32_t left, int32_t right, Merge merge) {
  const uint64_t key = pair_key(left, right);
  const size_t mask = slots_.size() - 1;
  for (size_t s = slot_of(key, slot_bits_);; s = (s + 1) & mask) {
    if (slots_[s].key == kEmptyKey || slots_[s].key == key) {
      slots_[s] = Slot{key, merge};  // a repeated pair takes its later rank
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::lookup(int32_t left, int32_t right) const {
  const uint64_t key = pair_key(left, right);
  const size_t mask = slots_.size() - 1;
  for (size_t s = slot_of(key, slot_bits_);; s = (s + 1) & mask) {
    if (slots_[s].key == key) return &slots_[s].merge;
    if (slots_[s].key == kEmptyKey) return nullptr;
  }
}

std::optional<int32_t> BpeModel::find(std::string_view bytes) const {
  const int32_t id = id_of_bytes_.find(bytes);
  if (id < 0) return std::nullopt;
  return id;
}

std::string_view BpeModel::token_bytes(int32_t id) const {
  if (id < 0 || id >= size()) return {};
  return token_bytes_[size_t(id)];
}

void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.size() == 1) {
    ids->push_back(byte_id_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (ignore_merges_) {
    if (const auto id = find(piece)) {
      ids->push_back(*id);
      return;
    }
  }
  if (piece.size() <= kScanMaxBytes) {
    int32_t work[kScanMaxBytes];
    Merge pairs[kScanMaxBytes];
    for (size_t i = 0; i < piece.size(); ++i) work[i] = byte_id_[static_cast<uint8_t>(piece[i])];
    const size_t n = merge_by_scan(work, piece.size(), pairs);
    ids->insert(ids->end(), work, work + n);
    return;
  }
  std::vector<int32_t> work(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) work[i] = byte_id_[static_cast<uint8_t>(piece[i])];
  merge_by_heap(&work);
  ids->insert(ids->end(), work.begin(), work.end());
}

size_t BpeModel::merge_by_scan(int32_t* ids, size_t n, Merge* pair) const {
  if (n < 2) return n;
  // pair[i] is the merge of (ids[i], ids[i+1]); rank INT_MAX when there is none.
  auto merge_of = [&](size_t i) {
    const Merge* m = lookup(ids[i], ids[i + 1]);
    return m ? *m : Merge{INT_MAX, -1};
  };
  for (size_t i = 0; i + 1 < n; ++i) pair[i] = merge_of(i);
  size_t n_pairs = n - 1;
  while (n_pairs > 0) {
    size_t best = 0;
    for (size_t i = 1; i < n_pairs; ++i) {
      if (pair[i].rank < pair[best].rank) best = i;  // strict: the leftmost wins a tie
    }
    if (pair[best].rank == INT_MAX) break;
    ids[best] = pair[best].merged;
    std::copy(ids + best + 2, ids + n, ids + best + 1);
    std::copy(pair + best + 1, pair + n_pairs, pair + best);
    --n;
    --n_pairs;
    if (best > 0) pair[best - 1] = merge_of(best - 1);
    if (best < n_pairs) pair[best] = merge_of(best);
  }
  return n;
}

void BpeModel::merge_by_heap(std::vector<int32_t>* ids_io) const {
  std::vector<int32_t>& ids = *ids_io;
  const auto n = static_cast<int32_t>(ids.size());
  if (n < 2) return;
  // A doubly linked list over the original positions; a merged-away symbol gets id -1.
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  // A candidate merge of the symbols at pos and next[pos], valid while both still hold the
  // ids it was made for. Ordered by (rank, pos): the lowest rank, then the leftmost.
  struct Candidate {
    int32_t rank, pos, left, right, merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto offer = [&](int32_t pos) {
    const int32_t nx = next[pos];
    if (nx < 0) return;
    if (const Merge* m = lookup(ids[pos], ids[nx])) {
      heap.push(Candidate{m->rank, pos, ids[pos], ids[nx], m->merged});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t nx = next[c.pos];
    if (ids[c.pos] != c.left || nx < 0 || ids[nx] != c.right) continue;  // stale
    ids[c.pos] = c.merged;
    ids[nx] = -1;
    next[c.pos] = next[nx];
    if (next[nx] >= 0) prev[next[nx]] = c.pos;
    if (prev[c.pos] >= 0) offer(prev[c.pos]);
    offer(c.pos);
  }
  std::erase(ids, -1);
}

}  // namespace anchorage::text

#include "cache/state_store.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "cache/budget.h"
#include "core/check.h"
#include "core/log.h"

namespace anchorage::cache {

namespace {

// Conversations whose decline was logged; forgotten wholesale past this many (a log line
// again, never unbounded memory).
constexpr size_t kMaxLoggedConversations = 4096;

bool same_tokens(const std::vector<int32_t>& stored, std::span<const int32_t> tokens) {
  return stored.size() == tokens.size() &&
         std::memcmp(stored.data(), tokens.data(), tokens.size() * sizeof(int32_t)) == 0;
}

}  // namespace

const char* store_put_name(StorePut outcome) {
  switch (outcome) {
    case StorePut::kStored:
      return "stored";
    case StorePut::kAlreadyStored:
      return "already_stored";
    case StorePut::kDeclinedBig:
      return "declined_big";
    case StorePut::kDeclinedShort:
      return "declined_short";
    case StorePut::kDeclinedTainted:
      return "declined_tainted";
    case StorePut::kDeclinedMemory:
      return "declined_memory";
  }
  return "unknown";
}

StateStore::StateStore(const StateStoreOptions& options) : options_(options) {}

int64_t StateStore::resumed_taint(const Entry& e) {
  const int64_t n = int64_t(e.tokens.size());
  // A prefill that resumes off the engine's exact grid writes rows a cold one would not.
  const int64_t off_grid = n % e.granularity != 0 ? n : kUntainted;
  return std::min(e.tainted_from, off_grid);
}

int64_t StateStore::entry_bytes_for(const engine::Engine& engine, int64_t n_tokens) {
  const engine::StateCost c = engine.cost();
  return c.section_bytes + n_tokens * (c.bytes_per_token + int64_t(sizeof(int32_t)));
}

uint64_t StateStore::hash_of(std::span<const int32_t> tokens) const {
  if (test_forced_hash_ != 0) return test_forced_hash_;
  return XXH3_64bits(tokens.data(), tokens.size() * sizeof(int32_t));
}

StateStore::EntryList::iterator StateStore::find_exact(std::span<const int32_t> tokens) {
  auto range = by_hash_.equal_range(hash_of(tokens));
  for (auto it = range.first; it != range.second; ++it) {
    if (same_tokens(it->second->tokens, tokens)) return it->second;
  }
  return lru_.end();
}

StorePut StateStore::put_session(engine::Engine& engine, std::span<const int32_t> tokens,
                                 int64_t tainted_from, std::string_view conversation) {
  return put(engine, tokens, tainted_from, /*prefix=*/false, conversation);
}

StorePut StateStore::put_prefix(engine::Engine& engine, std::span<const int32_t> tokens,
                                int64_t tainted_from, std::string_view conversation) {
  return put(engine, tokens, tainted_from, /*prefix=*/true, conversation);
}

int64_t StateStore::max_entry_tokens(const engine::Engine& engine) const {
  const engine::StateCost c = engine.cost();
  const int64_t cap = std::min(options_.entry_bytes, options_.cache_bytes);
  if (cap < c.section_bytes) return 0;
  return (cap - c.section_bytes) / (c.bytes_per_token + int64_t(sizeof(int32_t)));
}

int64_t StateStore::prefix_line(int64_t prompt_len, const engine::Engine& engine) const {
  if (options_.prefix_chunk < 1) return 0;
  // The engine reports a state only at its anchor lines and at the prefill's end.
  const int64_t step = std::lcm(options_.prefix_chunk, engine.options().anchor_spacing);
  return std::min(prompt_len, max_entry_tokens(engine)) / step * step;
}

StorePut StateStore::put_prefix_from(engine::Engine& engine, std::span<const int32_t> tokens,
                                     const SectionCopy& sections, int64_t tainted_from) {
  return put(engine, tokens, tainted_from, /*prefix=*/true, {}, &sections);
}

StorePut StateStore::put(engine::Engine& engine, std::span<const int32_t> tokens,
                         int64_t tainted_from, bool prefix, std::string_view conversation,
                         const SectionCopy* sections) {
  const int64_t n = int64_t(tokens.size());
  // A key that does not cover the state exactly (the engine forwarded tokens the turn did not
  // commit, or the reverse) has no entry: decline before anything is cloned (seed, SRV-253).
  const bool covers = sections != nullptr ? sections->position() == n && n <= engine.length()
                                          : n == engine.length();
  if (n == 0 || !covers) return decline(StorePut::kDeclinedShort, n, 0, conversation);
  if (prefix && tainted_from < n) return decline(StorePut::kDeclinedTainted, n, 0, conversation);

  auto existing = find_exact(tokens);
  if (existing != lru_.end()) {
    if (existing->tainted_from >= tainted_from) {
      lru_.splice(lru_.begin(), lru_, existing);
      ++counts_.already_stored;
      return StorePut::kAlreadyStored;
    }
    erase(existing);  // the new state is exact further up: it replaces the tainted one
  }

  const int64_t bytes = entry_bytes_for(engine, n);
  if (bytes > std::min(options_.entry_bytes, options_.cache_bytes))
    return decline(StorePut::kDeclinedBig, n, bytes, conversation);
  if (!reserve(bytes)) return decline(StorePut::kDeclinedMemory, n, bytes, conversation);

  Entry e;
  e.id = next_id_++;
  e.hash = hash_of(tokens);
  e.tokens.assign(tokens.begin(), tokens.end());
  e.tainted_from = tainted_from;
  e.granularity = engine.exact_granularity();
  e.sections = sections != nullptr ? sections->clone() : SectionCopy::capture(engine);
  e.rows = RowCopy::capture(engine, 0, n);
  e.bytes = e.sections.bytes() + e.rows.bytes() + n * int64_t(sizeof(int32_t));
  ANCHORAGE_CHECK(e.bytes == bytes);  // reserve() counted what the clone really takes
  // The clone exists now beside everything held: this is the moment a late eviction would
  // have pushed the store over its cap.
  note_peak(held_bytes_ + e.bytes);
  insert(std::move(e));
  ++(prefix ? counts_.prefix_puts : counts_.session_puts);
  return StorePut::kStored;
}

StorePut StateStore::decline(StorePut why, int64_t n_tokens, int64_t bytes,
                             std::string_view conversation) {
  switch (why) {
    case StorePut::kDeclinedBig:
      ++counts_.declined_big;
      break;
    case StorePut::kDeclinedShort:
      ++counts_.declined_short;
      break;
    case StorePut::kDeclinedTainted:
      ++counts_.declined_tainted;
      break;
    case StorePut::kDeclinedMemory:
      ++counts_.declined_memory;
      break;
    default:
      ANCHORAGE_CHECK(false);
  }
  // Over the entry cap every turn of a long conversation is declined again: say it once.
  bool first = true;
  if (!conversation.empty()) {
    if (logged_conversations_.size() >= kMaxLoggedConversations) logged_conversations_.clear();
    first =
        logged_conversations_.insert(XXH3_64bits(conversation.data(), conversation.size())).second;
  }
  if (first) {
    ANCHORAGE_LOG_INFO(
        "state store: put of %lld tokens %s (entry %lld bytes; caps %lld per entry, %lld in all)",
        static_cast<long long>(n_tokens), store_put_name(why), static_cast<long long>(bytes),
        static_cast<long long>(options_.entry_bytes), static_cast<long long>(options_.cache_bytes));
  }
  return why;
}

bool StateStore::reserve(int64_t bytes) {
  if (bytes > options_.cache_bytes) return false;
  const int64_t budget_over = budget_ ? budget_->growth_deficit(bytes) : 0;
  const int64_t cheaper = budget_ ? budget_->held_cheaper_than(*this) : 0;
  if (budget_over > held_bytes_ + cheaper) return false;  // not even with all of it gone
  // Cheaper levels give way first; then this store's least recently used entries.
  if (budget_over > 0 && cheaper > 0) budget_->shed_cheaper_than(*this, budget_over);
  auto fits = [&] {
    return held_bytes_ + bytes <= options_.cache_bytes &&
           (budget_ == nullptr || budget_->growth_deficit(bytes) <= 0);
  };
  while (!fits() && !lru_.empty()) {
    ++counts_.evictions;
    counts_.evicted_bytes += lru_.back().bytes;
    erase(std::prev(lru_.end()));
  }
  return fits();
}

void StateStore::insert(Entry entry) {
  held_bytes_ += entry.bytes;
  ++lengths_[int64_t(entry.tokens.size())];
  lru_.push_front(std::move(entry));
  auto it = lru_.begin();
  by_hash_.emplace(it->hash, it);
  by_id_.emplace(it->id, it);
}

void StateStore::erase(EntryList::iterator it) {
  auto range = by_hash_.equal_range(it->hash);
  for (auto h = range.first; h != range.second; ++h) {
    if (h->second == it) {
      by_hash_.erase(h);
      break;
    }
  }
  by_id_.erase(it->id);
  auto len = lengths_.find(int64_t(it->tokens.size()));
  if (--len->second == 0) lengths_.erase(len);
  held_bytes_ -= it->bytes;
  lru_.erase(it);
}

ResumeOffer StateStore::offer(std::span<const int32_t> prompt, std::string_view) const {
  ResumeOffer none;
  const int64_t n = int64_t(prompt.size());
  if (n < 2 || lru_.empty()) return none;
  // One pass over the prompt gives the hash of its prefix at every stored length below n.
  std::vector<std::pair<int64_t, uint64_t>> prefixes;
  XXH3_state_t* state = XXH3_createState();
  ANCHORAGE_CHECK(state != nullptr);
  XXH3_64bits_reset(state);
  int64_t hashed = 0;
  for (const auto& [len, count] : lengths_) {
    if (len >= n) break;
    XXH3_64bits_update(state, prompt.data() + hashed, size_t(len - hashed) * sizeof(int32_t));
    hashed = len;
    prefixes.emplace_back(len, test_forced_hash_ ? test_forced_hash_ : XXH3_64bits_digest(state));
  }
  XXH3_freeState(state);
  for (auto p = prefixes.rbegin(); p != prefixes.rend(); ++p) {
    const std::span<const int32_t> key = prompt.first(size_t(p->first));
    auto range = by_hash_.equal_range(p->second);
    for (auto it = range.first; it != range.second; ++it) {
      const Entry& e = *it->second;
      if (int64_t(e.tokens.size()) != p->first) continue;
      if (!same_tokens(e.tokens, key)) {
        ++hash_collisions_;  // the hash was a hint, and a wrong one
        continue;
      }
      ResumeOffer o;
      o.resume_at = p->first;
      o.source = ResumeSource::kStore;
      o.restore_bytes = e.sections.bytes() + e.rows.bytes();
      o.tag = int64_t(e.id);
      o.exact = resumed_taint(e) == kUntainted;
      return o;
    }
  }
  return none;
}

core::Result<StoreRestore> StateStore::take(engine::Engine& engine, const ResumeOffer& offer) {
  auto found = by_id_.find(uint64_t(offer.tag));
  if (offer.source != ResumeSource::kStore || found == by_id_.end())
    return core::Status::not_found("state store: the offered entry is gone");
  const Entry& e = *found->second;
  const int64_t n = int64_t(e.tokens.size());
  if (offer.resume_at != n)
    return core::Status::invalid_argument("state store: the offer does not match its entry");
  // Check every size before the first byte is written, so a refusal leaves the engine as is.
  const core::StateLayout& layout = engine.layout();
  if (n > engine.capacity() || e.sections.bytes() != layout.section_bytes() ||
      e.rows.bytes() != n * layout.bytes_per_token())
    return core::Status::invalid_argument(
        "state store: the engine's layout does not take the entry");
  if (core::Status s = e.sections.write_back(engine); !s.is_ok()) return s;
  if (core::Status s = e.rows.write_back(engine); !s.is_ok()) return s;
  if (core::Status s = engine.resume_at(n); !s.is_ok()) return s;
  ++counts_.hits;
  counts_.hit_tokens += n;
  StoreRestore r{n, resumed_taint(e)};
  lru_.splice(lru_.begin(), lru_, found->second);
  return r;
}

int64_t StateStore::shed(int64_t want) {
  int64_t freed = 0;
  while (freed < want && !lru_.empty()) {
    const int64_t b = lru_.back().bytes;
    ++counts_.evictions;
    counts_.evicted_bytes += b;
    erase(std::prev(lru_.end()));
    freed += b;
  }
  return freed;
}

void StateStore::clear() {
  lru_.clear();
  by_hash_.clear();
  by_id_.clear();
  lengths_.clear();
  held_bytes_ = 0;
}

StateStoreStats StateStore::stats() const {
  StateStoreStats s = counts_;
  s.entries = int64_t(lru_.size());
  s.held_bytes = held_bytes_;
  s.peak_bytes = peak_bytes_;
  s.cache_bytes = options_.cache_bytes;
  s.entry_bytes = options_.entry_bytes;
  s.hash_collisions = hash_collisions_;
  return s;
}

}  // namespace anchorage::cache

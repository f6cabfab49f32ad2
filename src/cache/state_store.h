// StateStore: whole snapshots of a sequence (every section, view rows [0, n) and the n token
// ids that produced them), keyed by those exact token ids (the seed's "State store",
// docs/architecture.md §5; docs/cache.md "State store"). One object serves two uses:
//   - the session cache: put_session() after a turn, with the tokens the engine forwarded; the
//     next turn starts with all of them and forwards only what is new;
//   - the prefix cache: put_prefix() at prefix_line(), the longest prefix_chunk line of a
//     prefill whose snapshot fits the entry cap, from the prefill's on_anchor callback.
// A 64-bit XXH3 of the ids is only a hint: every hit compares every token, because a collision
// would answer one request with another request's state.
//
// Memory: entries are bounded by cache_bytes in all and entry_bytes each; room is made
// (reserve(), LRU eviction, and the Budget's cheaper levels when one is attached) BEFORE a
// snapshot is cloned, never after. A put that cannot fit is declined and counted by reason; the
// decline is logged once per conversation, with token counts only.
//
// Taint (docs/exactness.md): a put carries `tainted_from`, the lowest row written by decode
// or by a prefill resumed from such a state (kUntainted: none). A session entry keeps it and
// hands it back on take(); a prefix put of a tainted prompt is declined.
//
// The store is also a CacheLevel ("store") for the Budget and an OfferSource for the Planner.
//
// Thread safety: none; the engine thread owns it (like the engine it copies from).
#pragma once

#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/cache_level.h"
#include "cache/offer_source.h"
#include "cache/resume_offer.h"
#include "cache/stat_field.h"
#include "cache/state_copy.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

class Budget;

struct StateStoreOptions {
  int64_t cache_bytes = int64_t(2) << 30;  // --cache-gb: every entry together
  int64_t entry_bytes = int64_t(1) << 30;  // --store-entry-gb: one entry
  // --prefix-chunk: prefix snapshots sit on multiples of it (and of the engine's anchor
  // spacing, where its prefill reports a state).
  int64_t prefix_chunk = 1024;
};

// What a put did (also counted in StateStoreStats).
enum class StorePut {
  kStored,           // a new entry
  kAlreadyStored,    // an entry with these tokens existed (made most recent)
  kDeclinedBig,      // over the entry cap or the whole store
  kDeclinedShort,    // the tokens do not describe the state (engine.length() differs)
  kDeclinedTainted,  // a prefix put of a tainted prompt
  kDeclinedMemory,   // the memory budget has no room even with the store emptied
};
const char* store_put_name(StorePut outcome);

// What take() restored.
struct StoreRestore {
  int64_t resume_at = 0;  // the engine's length now
  // The lowest row of the resumed sequence not held to bit equality with a cold prefill: the
  // entry's own taint, or resume_at when it is off the engine's exact grid (the prefill that
  // continues from there writes other rows than a cold one). StateStore::kUntainted: exact.
  int64_t tainted_from = 0;
};

struct StateStoreStats {
  int64_t entries = 0;
  int64_t held_bytes = 0;
  int64_t peak_bytes = 0;  // the most the store ever held, a snapshot being cloned included
  int64_t cache_bytes = 0;
  int64_t entry_bytes = 0;
  int64_t session_puts = 0;  // stored by put_session
  int64_t prefix_puts = 0;   // stored by put_prefix
  int64_t already_stored = 0;
  int64_t declined_big = 0;
  int64_t declined_short = 0;
  int64_t declined_tainted = 0;
  int64_t declined_memory = 0;
  int64_t hits = 0;  // take() restores
  int64_t hit_tokens = 0;
  int64_t evictions = 0;  // entries dropped to make room (LRU) or shed
  int64_t evicted_bytes = 0;
  int64_t hash_collisions = 0;  // a lookup met an equal hash over other tokens

  // Every field once, for JSON, /metrics and /health (stat_field.h).
  template <class F>
  void visit(F&& f) const {
    f("entries", entries, StatKind::kGauge);
    f("held_bytes", held_bytes, StatKind::kGauge);
    f("peak_bytes", peak_bytes, StatKind::kGauge);
    f("cache_bytes", cache_bytes, StatKind::kGauge);
    f("entry_bytes", entry_bytes, StatKind::kGauge);
    f("session_puts", session_puts, StatKind::kCounter);
    f("prefix_puts", prefix_puts, StatKind::kCounter);
    f("already_stored", already_stored, StatKind::kCounter);
    f("declined_big", declined_big, StatKind::kCounter);
    f("declined_short", declined_short, StatKind::kCounter);
    f("declined_tainted", declined_tainted, StatKind::kCounter);
    f("declined_memory", declined_memory, StatKind::kCounter);
    f("hits", hits, StatKind::kCounter);
    f("hit_tokens", hit_tokens, StatKind::kCounter);
    f("evictions", evictions, StatKind::kCounter);
    f("evicted_bytes", evicted_bytes, StatKind::kCounter);
    f("hash_collisions", hash_collisions, StatKind::kCounter);
  }
};

class StateStore final : public CacheLevel, public OfferSource {
 public:
  static constexpr int64_t kUntainted = std::numeric_limits<int64_t>::max();

  explicit StateStore(const StateStoreOptions& options);
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Makes puts also fit the Budget's ceiling (shedding cheaper levels, then this store's own
  // oldest entries). Null detaches. The budget must outlive the store or be detached.
  void set_budget(Budget* budget) { budget_ = budget; }
  const StateStoreOptions& options() const { return options_; }

  // The bytes an entry of n tokens takes on this engine (sections + n rows + n ids).
  static int64_t entry_bytes_for(const engine::Engine& engine, int64_t n_tokens);

  // The session cache, after a turn: tokens = every token the engine forwarded, so
  // tokens.size() == engine.length() (else kDeclinedShort, before anything is cloned).
  // `conversation` keys the once-per-conversation decline log (empty: log every decline).
  StorePut put_session(engine::Engine& engine, std::span<const int32_t> tokens,
                       int64_t tainted_from = kUntainted, std::string_view conversation = {});
  // The prefix line for a prompt of prompt_len tokens: the largest multiple of prefix_chunk
  // and of the engine's anchor spacing, <= prompt_len, whose entry fits the caps; 0: none.
  // A prefill that resumes at or past it passes no such line.
  int64_t prefix_line(int64_t prompt_len, const engine::Engine& engine) const;
  // The longest prompt whose entry fits the caps (a prefix put at a line off the grid, which
  // the prefill is asked to report, must be at most this long).
  int64_t max_entry_tokens(const engine::Engine& engine) const;
  // From the prefill's on_anchor(position == prefix_line(...), any is_end): tokens = the
  // prompt's first `position` ids. A tainted prefix (tainted_from < tokens.size()) is declined.
  StorePut put_prefix(engine::Engine& engine, std::span<const int32_t> tokens,
                      int64_t tainted_from = kUntainted, std::string_view conversation = {});
  // The same entry later, from a copy of the sections at tokens.size() (a body anchor) and
  // the engine's rows [0, tokens.size()), which must still be those tokens' (the engine may
  // have gone further since: an answer, decoded above them). What the server uses to take
  // the prefix line off the request path (docs/cache.md "State store").
  StorePut put_prefix_from(engine::Engine& engine, std::span<const int32_t> tokens,
                           const SectionCopy& sections, int64_t tainted_from = kUntainted);

  // The longest entry that is a strict prefix of `prompt` (an entry equal to the whole prompt
  // is not offered: its state is past the last token, whose logits the request needs).
  // tier "ram_snapshot", source "store", tag = the entry's id, exact = the resumed sequence is
  // held to bit equality (StoreRestore::tainted_from below). Counts nothing.
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const override;
  // Restores the offered entry into the engine: sections, rows [0, n), resume_at(n).
  // NotFound when the entry went since the offer; InvalidArgument when the engine's layout
  // does not take it. On an error after the first byte was written the engine's state is
  // undefined: the caller resets it and starts cold.
  core::Result<StoreRestore> take(engine::Engine& engine, const ResumeOffer& offer);

  // Frees room for an entry of `bytes`: evicts least recently used entries (and, with a
  // Budget, sheds cheaper levels first) until the entry fits the store and the ceiling.
  // False, with nothing evicted, when it cannot fit even with every entry gone.
  bool reserve(int64_t bytes);
  void clear();

  // CacheLevel.
  std::string_view level_name() const override { return "store"; }
  int64_t held_bytes() const override { return held_bytes_; }
  int64_t shed(int64_t want) override;

  StateStoreStats stats() const;
  int64_t entries() const { return int64_t(lru_.size()); }

  // Test hook: every key hashes to `hash` (collisions on purpose); 0 restores XXH3.
  void test_force_hash(uint64_t hash) { test_forced_hash_ = hash; }

 private:
  struct Entry {
    uint64_t id = 0;
    uint64_t hash = 0;
    std::vector<int32_t> tokens;
    SectionCopy sections;
    RowCopy rows;
    int64_t bytes = 0;
    int64_t tainted_from = kUntainted;
    int64_t granularity = 1;  // the engine's exact_granularity() when it was put
  };
  using EntryList = std::list<Entry>;  // most recently used first

  // `sections`: the state at tokens.size() (null: the engine's, then at that length).
  StorePut put(engine::Engine& engine, std::span<const int32_t> tokens, int64_t tainted_from,
               bool prefix, std::string_view conversation, const SectionCopy* sections = nullptr);
  StorePut decline(StorePut why, int64_t n_tokens, int64_t bytes, std::string_view conversation);
  uint64_t hash_of(std::span<const int32_t> tokens) const;
  // The taint of a sequence resumed from e: its own, or its end when that is off the grid.
  static int64_t resumed_taint(const Entry& e);
  // The entry holding exactly `tokens`, or end().
  EntryList::iterator find_exact(std::span<const int32_t> tokens);
  void insert(Entry entry);
  void erase(EntryList::iterator it);
  void note_peak(int64_t bytes) {
    if (bytes > peak_bytes_) peak_bytes_ = bytes;
  }

  StateStoreOptions options_;
  Budget* budget_ = nullptr;
  EntryList lru_;
  std::unordered_multimap<uint64_t, EntryList::iterator> by_hash_;
  std::unordered_map<uint64_t, EntryList::iterator> by_id_;
  std::map<int64_t, int64_t> lengths_;  // entry length -> entries of that length
  std::unordered_set<uint64_t> logged_conversations_;
  uint64_t next_id_ = 1;
  int64_t held_bytes_ = 0;
  int64_t peak_bytes_ = 0;
  uint64_t test_forced_hash_ = 0;
  StateStoreStats counts_;               // the counters; sizes are filled by stats()
  mutable int64_t hash_collisions_ = 0;  // diagnostic, also from the const offer()
};

}  // namespace anchorage::cache

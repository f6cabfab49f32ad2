// ResponseCache: an identical greedy request answered from memory (the seed's "Response
// cache", docs/architecture.md §5). Greedy output is a function of its input, so this is
// memoisation, not an approximation. Off by default: the caller decides to use it at all
// (--response-cache), so a benchmark is never pointed at a dictionary by accident.
//
// Key: the exact prompt token ids (compared element by element on every hit; XXH3 is only a
// hint) and a canonical string of the request parameters that matter, made by the caller
// (sampling, max_tokens, stop ids and strings, logprob options...). That string may hold user
// text (stop strings), so only its 128-bit XXH3 is kept. Value: the generated token ids with
// their logprobs and top-logprobs lists (ids and f32 values) and the finish reason. No text
// is ever stored. Bounded bytes, least recently used evicted first; also a CacheLevel
// ("response") so the Budget can shed it.
//
// Thread safety: none; one owner thread (the engine thread).
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/cache_level.h"
#include "cache/stat_field.h"

namespace anchorage::cache {

struct CachedToken {
  int32_t token = 0;
  float logprob = 0.0f;                        // meaningful when the request asked for logprobs
  std::vector<std::pair<int32_t, float>> top;  // top alternatives, most likely first
};

struct CachedResponse {
  std::vector<CachedToken> tokens;
  std::string finish_reason;  // the caller's finish code ("length", "stop_token"...), no text
};

struct ResponseCacheOptions {
  int64_t max_bytes = int64_t(64) << 20;
};

struct ResponseCacheStats {
  int64_t entries = 0;
  int64_t held_bytes = 0;
  int64_t max_bytes = 0;
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t puts = 0;
  int64_t declined_big = 0;  // one response over max_bytes
  int64_t evictions = 0;
  int64_t evicted_bytes = 0;

  // Every field once, for JSON, /metrics and /health (stat_field.h).
  template <class F>
  void visit(F&& f) const {
    f("entries", entries, StatKind::kGauge);
    f("held_bytes", held_bytes, StatKind::kGauge);
    f("max_bytes", max_bytes, StatKind::kGauge);
    f("hits", hits, StatKind::kCounter);
    f("misses", misses, StatKind::kCounter);
    f("puts", puts, StatKind::kCounter);
    f("declined_big", declined_big, StatKind::kCounter);
    f("evictions", evictions, StatKind::kCounter);
    f("evicted_bytes", evicted_bytes, StatKind::kCounter);
  }
};

class ResponseCache final : public CacheLevel {
 public:
  explicit ResponseCache(const ResponseCacheOptions& options);
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The stored response for exactly this prompt and parameter string; counts a hit or a miss
  // and makes a hit the most recent.
  std::optional<CachedResponse> find(std::span<const int32_t> prompt, std::string_view params);
  // Stores (or replaces) the response; evicts the least recently used to make room first.
  // False when it alone is over max_bytes.
  bool put(std::span<const int32_t> prompt, std::string_view params, CachedResponse response);
  void clear();

  // The bytes an entry takes (ids, logprobs, top lists, bookkeeping): what max_bytes counts.
  static int64_t entry_bytes(int64_t prompt_tokens, const CachedResponse& response);

  // CacheLevel.
  std::string_view level_name() const override { return "response"; }
  int64_t held_bytes() const override { return held_bytes_; }
  int64_t shed(int64_t want) override;

  ResponseCacheStats stats() const;

  // Test hook: every prompt hashes to `hash` (collisions on purpose); 0 restores XXH3.
  void test_force_hash(uint64_t hash) { test_forced_hash_ = hash; }

 private:
  struct Key {
    uint64_t prompt_hash = 0;
    uint64_t params_low = 0;  // XXH3-128 of the parameter string
    uint64_t params_high = 0;
  };
  struct Entry {
    Key key;
    std::vector<int32_t> prompt;
    CachedResponse response;
    int64_t bytes = 0;
  };
  using EntryList = std::list<Entry>;  // most recently used first

  Key key_of(std::span<const int32_t> prompt, std::string_view params) const;
  EntryList::iterator find_entry(const Key& key, std::span<const int32_t> prompt);
  void erase(EntryList::iterator it);
  void evict_oldest();

  ResponseCacheOptions options_;
  EntryList lru_;
  std::unordered_multimap<uint64_t, EntryList::iterator> by_hash_;  // prompt hash
  int64_t held_bytes_ = 0;
  uint64_t test_forced_hash_ = 0;
  ResponseCacheStats counts_;
};

}  // namespace anchorage::cache

#include "cache/response_cache.h"

#include <xxhash.h>

#include <cstring>

namespace anchorage::cache {

namespace {

// Bookkeeping per entry (list node, index slot, vectors' headers): a round figure so that many
// tiny entries still count against max_bytes.
constexpr int64_t kEntryOverheadBytes = 256;

}  // namespace

ResponseCache::ResponseCache(const ResponseCacheOptions& options) : options_(options) {}

int64_t ResponseCache::entry_bytes(int64_t prompt_tokens, const CachedResponse& response) {
  int64_t n = kEntryOverheadBytes + prompt_tokens * int64_t(sizeof(int32_t)) +
              int64_t(response.finish_reason.size());
  for (const CachedToken& t : response.tokens)
    n += int64_t(sizeof(CachedToken)) +
         int64_t(t.top.size()) * int64_t(sizeof(std::pair<int32_t, float>));
  return n;
}

ResponseCache::Key ResponseCache::key_of(std::span<const int32_t> prompt,
                                         std::string_view params) const {
  Key k;
  k.prompt_hash = test_forced_hash_ != 0
                      ? test_forced_hash_
                      : XXH3_64bits(prompt.data(), prompt.size() * sizeof(int32_t));
  const XXH128_hash_t p = XXH3_128bits(params.data(), params.size());
  k.params_low = p.low64;
  k.params_high = p.high64;
  return k;
}

ResponseCache::EntryList::iterator ResponseCache::find_entry(const Key& key,
                                                             std::span<const int32_t> prompt) {
  auto range = by_hash_.equal_range(key.prompt_hash);
  for (auto it = range.first; it != range.second; ++it) {
    const Entry& e = *it->second;
    if (e.key.params_low != key.params_low || e.key.params_high != key.params_high) continue;
    // The prompt hash is a hint: compare every id.
    if (e.prompt.size() == prompt.size() &&
        std::memcmp(e.prompt.data(), prompt.data(), prompt.size() * sizeof(int32_t)) == 0)
      return it->second;
  }
  return lru_.end();
}

std::optional<CachedResponse> ResponseCache::find(std::span<const int32_t> prompt,
                                                  std::string_view params) {
  auto it = find_entry(key_of(prompt, params), prompt);
  if (it == lru_.end()) {
    ++counts_.misses;
    return std::nullopt;
  }
  ++counts_.hits;
  lru_.splice(lru_.begin(), lru_, it);
  return it->response;
}

bool ResponseCache::put(std::span<const int32_t> prompt, std::string_view params,
                        CachedResponse response) {
  const Key key = key_of(prompt, params);
  const int64_t bytes = entry_bytes(int64_t(prompt.size()), response);
  if (bytes > options_.max_bytes) {
    ++counts_.declined_big;
    return false;
  }
  if (auto old = find_entry(key, prompt); old != lru_.end()) erase(old);
  while (held_bytes_ + bytes > options_.max_bytes && !lru_.empty()) evict_oldest();
  Entry e;
  e.key = key;
  e.prompt.assign(prompt.begin(), prompt.end());
  e.response = std::move(response);
  e.bytes = bytes;
  lru_.push_front(std::move(e));
  by_hash_.emplace(key.prompt_hash, lru_.begin());
  held_bytes_ += bytes;
  ++counts_.puts;
  return true;
}

void ResponseCache::erase(EntryList::iterator it) {
  auto range = by_hash_.equal_range(it->key.prompt_hash);
  for (auto h = range.first; h != range.second; ++h) {
    if (h->second == it) {
      by_hash_.erase(h);
      break;
    }
  }
  held_bytes_ -= it->bytes;
  lru_.erase(it);
}

void ResponseCache::evict_oldest() {
  ++counts_.evictions;
  counts_.evicted_bytes += lru_.back().bytes;
  erase(std::prev(lru_.end()));
}

int64_t ResponseCache::shed(int64_t want) {
  int64_t freed = 0;
  while (freed < want && !lru_.empty()) {
    freed += lru_.back().bytes;
    evict_oldest();
  }
  return freed;
}

void ResponseCache::clear() {
  lru_.clear();
  by_hash_.clear();
  held_bytes_ = 0;
}

ResponseCacheStats ResponseCache::stats() const {
  ResponseCacheStats s = counts_;
  s.entries = int64_t(lru_.size());
  s.held_bytes = held_bytes_;
  s.max_bytes = options_.max_bytes;
  return s;
}

}  // namespace anchorage::cache

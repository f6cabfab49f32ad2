// CacheKey: the 128-bit content key of a disk tier file, XXH3-128 of the fingerprint and the
// whole token prefix the file's state depends on (docs/formats/disk-tier.md "Keys"). Two
// prompts that share a prefix share its keys; a key is a lookup hint only, since every read
// compares the stored token ids with the prompt's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <xxhash.h>

namespace anchorage::cache {

struct CacheKey {
  uint64_t lo = 0;
  uint64_t hi = 0;

  bool operator==(const CacheKey&) const = default;
  bool is_zero() const { return lo == 0 && hi == 0; }
  // 32 lowercase hex digits, hi first (the file name's stem).
  std::string hex() const;
  static std::optional<CacheKey> from_hex(std::string_view s);
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return size_t(k.lo ^ (k.hi * 0x9e3779b97f4a7c15ull));
  }
};

// Keys of a growing prefix: feed tokens in order, ask for the key of everything fed so far.
class PrefixHasher {
 public:
  explicit PrefixHasher(std::string_view fingerprint);
  ~PrefixHasher();
  PrefixHasher(const PrefixHasher&) = delete;
  PrefixHasher& operator=(const PrefixHasher&) = delete;

  void feed(std::span<const int32_t> tokens);
  int64_t fed() const { return fed_; }
  CacheKey key() const;

 private:
  XXH3_state_t* state_;
  int64_t fed_ = 0;
};

// The key of the prefix tokens (one call; the same as feeding them to a PrefixHasher).
CacheKey prefix_key(std::string_view fingerprint, std::span<const int32_t> tokens);

}  // namespace anchorage::cache

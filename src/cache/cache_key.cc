#include "cache/cache_key.h"

#include <cstdio>

namespace anchorage::cache {

std::string CacheKey::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", (unsigned long long)hi, (unsigned long long)lo);
  return buf;
}

std::optional<CacheKey> CacheKey::from_hex(std::string_view s) {
  if (s.size() != 32) return std::nullopt;
  uint64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const char c = s[i];
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    parts[i / 16] = parts[i / 16] << 4 | uint64_t(v);
  }
  return CacheKey{parts[1], parts[0]};
}

PrefixHasher::PrefixHasher(std::string_view fingerprint) : state_(XXH3_createState()) {
  XXH3_128bits_reset(state_);
  // The fingerprint's length first, so that no fingerprint and prefix pair hashes like another.
  const uint64_t n = fingerprint.size();
  XXH3_128bits_update(state_, &n, sizeof(n));
  XXH3_128bits_update(state_, fingerprint.data(), fingerprint.size());
}

PrefixHasher::~PrefixHasher() {
  XXH3_freeState(state_);
}

void PrefixHasher::feed(std::span<const int32_t> tokens) {
  // Token ids hash as their little-endian int32 bytes (this build targets x86-64 only).
  XXH3_128bits_update(state_, tokens.data(), tokens.size() * sizeof(int32_t));
  fed_ += int64_t(tokens.size());
}

CacheKey PrefixHasher::key() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_);
  return CacheKey{h.low64, h.high64};
}

CacheKey prefix_key(std::string_view fingerprint, std::span<const int32_t> tokens) {
  PrefixHasher h(fingerprint);
  h.feed(tokens);
  return h.key();
}

}  // namespace anchorage::cache

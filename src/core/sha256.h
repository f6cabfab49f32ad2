// Sha256: SHA-256 digests (FIPS 180-4), from OpenSSL's libcrypto (EVP), which uses the CPU's
// SHA extensions where it has them. What the fingerprint (cache/fingerprint.h) identifies
// model weights and sources by; not a checksum for cache payloads (crc32c.h is, and is faster).
// Not thread-safe: one Sha256 per thread; sha256() may be called from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace anchorage::core {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::byte> data);
  void update(std::string_view text) { update(std::as_bytes(std::span(text))); }
  // The digest of everything updated so far; the object starts over afterwards.
  Sha256Digest finish();

 private:
  evp_md_ctx_st* ctx_;
};

Sha256Digest sha256(std::span<const std::byte> data);
Sha256Digest sha256(std::string_view text);

// Lower-case hex, two characters a byte.
std::string to_hex(std::span<const uint8_t> bytes);

}  // namespace anchorage::core

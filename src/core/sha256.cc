#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/check.h"

namespace anchorage::core {

// EVP calls fail only when out of memory or on a broken OpenSSL install: bugs, not statuses.
Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  ANCHORAGE_CHECK_MSG(ctx_ != nullptr, "out of memory");
  ANCHORAGE_CHECK(EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_);
}

void Sha256::update(std::span<const std::byte> data) {
  ANCHORAGE_CHECK(EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1);
}

Sha256Digest Sha256::finish() {
  Sha256Digest d{};
  unsigned int n = 0;
  ANCHORAGE_CHECK(EVP_DigestFinal_ex(ctx_, d.data(), &n) == 1 && n == d.size());
  ANCHORAGE_CHECK(EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1);
  return d;
}

Sha256Digest sha256(std::span<const std::byte> data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

Sha256Digest sha256(std::string_view text) {
  return sha256(std::as_bytes(std::span(text)));
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

}  // namespace anchorage::core

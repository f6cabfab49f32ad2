#include "text/token_bytes.h"

#include <cstdint>

#include "core/check.h"
#include "core/page_populate.h"
#include "text/byte_level.h"

namespace anchorage::text {

TokenBytes::TokenBytes(std::initializer_list<std::string_view> entries) {
  for (std::string_view e : entries) push_back(e);
}

void TokenBytes::reserve(size_t n, size_t bytes) {
  core::reserve_populated(ends_, n);  // about to be filled: its pages in by one call each
  core::reserve_populated(bytes_, bytes);
}

void TokenBytes::end_entry() {
  ANCHORAGE_CHECK(bytes_.size() <= kMaxBytes);
  ends_.push_back(uint32_t(bytes_.size()));
}

void TokenBytes::push_back(std::string_view bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  end_entry();
}

void TokenBytes::push_back_joined(std::string_view a, std::string_view b) {
  bytes_.insert(bytes_.end(), a.begin(), a.end());
  bytes_.insert(bytes_.end(), b.begin(), b.end());
  end_entry();
}

bool TokenBytes::push_back_byte_level(std::string_view piece) {
  const size_t at = bytes_.size();
  bytes_.resize(at + piece.size());  // at most one byte per character
  const size_t n = byte_level_decode(piece, bytes_.data() + at);
  if (n == kNotByteLevel) {
    bytes_.resize(at);
    return false;
  }
  bytes_.resize(at + n);
  end_entry();
  return true;
}

void TokenBytes::resize(size_t n) {
  if (n < ends_.size()) {
    ends_.resize(n);
    bytes_.resize(n == 0 ? 0 : ends_.back());
    return;
  }
  ends_.resize(n, uint32_t(bytes_.size()));
}

}  // namespace anchorage::text

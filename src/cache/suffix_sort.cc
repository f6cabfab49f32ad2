#include "cache/suffix_sort.h"

#include <divsufsort.h>
#include <divsufsort64.h>

#include <limits>
#include <string>

namespace anchorage::cache {
namespace {

constexpr uint64_t kTokenBytes = 3;

// Keeps the byte suffixes that start on a token boundary, as token positions.
template <typename Index>
std::vector<uint32_t> token_positions(const std::vector<Index>& byte_sa, size_t n_tokens) {
  std::vector<uint32_t> sa;
  sa.reserve(n_tokens);
  for (Index p : byte_sa) {
    if (p % kTokenBytes == 0) sa.push_back(static_cast<uint32_t>(p / kTokenBytes));
  }
  return sa;
}

}  // namespace

core::Result<std::vector<uint32_t>> sort_token_suffixes(std::span<const uint32_t> text,
                                                        bool force_64bit) {
  if (text.size() >= (uint64_t{1} << 32)) {
    return core::Status::invalid_argument("suffix sort: " + std::to_string(text.size()) +
                                          " tokens (the limit is 2^32 - 1)");
  }
  std::vector<uint8_t> bytes(text.size() * kTokenBytes);
  for (size_t i = 0; i < text.size(); ++i) {
    uint32_t t = text[i];
    if (t > kMaxSortableToken) {
      return core::Status::invalid_argument("suffix sort: token id " + std::to_string(t) +
                                            " over " + std::to_string(kMaxSortableToken));
    }
    bytes[3 * i] = uint8_t(t >> 16);
    bytes[3 * i + 1] = uint8_t(t >> 8);
    bytes[3 * i + 2] = uint8_t(t);
  }
  if (bytes.empty()) return std::vector<uint32_t>{};
  const bool fits_32 = bytes.size() <= uint64_t(std::numeric_limits<saidx_t>::max());
  if (fits_32 && !force_64bit) {
    std::vector<saidx_t> byte_sa(bytes.size());
    if (divsufsort(bytes.data(), byte_sa.data(), saidx_t(bytes.size())) != 0) {
      return core::Status::resource_exhausted("suffix sort: divsufsort failed");
    }
    std::vector<uint8_t>().swap(bytes);  // not needed to filter: lowers the peak
    return token_positions(byte_sa, text.size());
  }
  std::vector<saidx64_t> byte_sa(bytes.size());
  if (divsufsort64(bytes.data(), byte_sa.data(), saidx64_t(bytes.size())) != 0) {
    return core::Status::resource_exhausted("suffix sort: divsufsort64 failed");
  }
  std::vector<uint8_t>().swap(bytes);
  return token_positions(byte_sa, text.size());
}

}  // namespace anchorage::cache

// TokenBytes: the raw bytes of a run of entries (a vocabulary's tokens by id, a merge list's
// halves), one after another in one buffer with an end offset each. A vocabulary of 150k tokens
// was a std::vector<std::string>: 4.8 MB of string headers and an allocation per long token,
// written once at start-up on fresh pages that cost ~10 us each on a VM that backs guest memory
// at first write (docs/performance.md "Start-up"). Here it is the bytes plus 4 bytes an entry.
//
// The buffer is a std::vector, whose move keeps its storage, so views of the entries
// (PieceIndex keys) stay valid when a TokenBytes is moved. Plain data; no threading concerns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace anchorage::text {

class TokenBytes {
 public:
  // The most bytes a TokenBytes holds (its offsets are 32-bit); more is a bug (CHECK): the
  // readers refuse a vocabulary whose strings are larger first, with an error naming the field.
  static constexpr size_t kMaxBytes = UINT32_MAX;

  TokenBytes() = default;
  TokenBytes(std::initializer_list<std::string_view> entries);

  // Room for n entries of `bytes` bytes in all.
  void reserve(size_t n, size_t bytes);
  // Appends an entry holding `bytes` (may be empty: "no such id").
  void push_back(std::string_view bytes);
  // Appends an entry holding a followed by b.
  void push_back_joined(std::string_view a, std::string_view b);
  // Appends an entry holding the raw bytes a byte-level piece stands for (text/byte_level.h);
  // false, and nothing appended, when piece is not one.
  bool push_back_byte_level(std::string_view piece);
  // Keeps the first n entries, or adds empty ones up to n.
  void resize(size_t n);

  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_.data() + begin, ends_[i] - begin);
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  size_t byte_size() const { return bytes_.size(); }

 private:
  void end_entry();  // closes the entry the bytes since the last end make

  std::vector<char> bytes_;
  std::vector<uint32_t> ends_;  // ends_[i]: one past entry i's last byte
};

}  // namespace anchorage::text

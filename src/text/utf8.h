// UTF-8 reading and writing by the rules of Unicode §3.9 (Table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF). Ill-formed input is replaced with U+FFFD one "maximal
// subpart" at a time (§3.9, "U+FFFD Substitution of Maximal Subparts"), the practice the
// WHATWG TextDecoder and Rust's from_utf8_lossy follow, so lossy text matches theirs.
// Pure functions: any thread may call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anchorage::text {

// What starts at a position of a byte string.
struct Utf8Scan {
  enum Kind : uint8_t {
    kValid,       // a well-formed character of n_bytes
    kIncomplete,  // the first n_bytes of a well-formed character, cut by the end of input
    kInvalid,     // an ill-formed maximal subpart of n_bytes (>= 1)
  };
  Kind kind;
  uint8_t n_bytes;
  char32_t cp;  // the character when kind == kValid
};

// Reads the character (or the ill-formed bytes) at s[pos]; pos < s.size().
Utf8Scan utf8_scan(std::string_view s, size_t pos);

// Bytes from pos up to the first byte that is not part of a well-formed character.
size_t utf8_valid_run(std::string_view s, size_t pos);

inline bool utf8_is_valid(std::string_view s) {
  return utf8_valid_run(s, 0) == s.size();
}

// Appends cp (<= U+10FFFF, not a surrogate) in UTF-8.
void utf8_append(char32_t cp, std::string* out);

// Appends s with every ill-formed maximal subpart replaced by U+FFFD, and an incomplete last
// character too when final is true. Returns the bytes of s consumed: s.size() when final,
// else everything but an incomplete last character (which a later call may complete).
size_t utf8_append_lossy(std::string_view s, bool final, std::string* out);

}  // namespace anchorage::text

#include "text/utf8.h"

#include <cstring>

namespace anchorage::text {

namespace {

// Table 3-7: the length of a sequence by its first byte and the range its second byte must
// be in (the later bytes are always 80..BF). n == 0: the byte cannot start a sequence.
struct LeadRule {
  uint8_t n;
  uint8_t lo;
  uint8_t hi;
};

LeadRule lead_rule(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b < 0xC2) return {0, 0, 0};  // continuation bytes and the overlong C0, C1
  if (b < 0xE0) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};  // no overlong 3-byte forms
  if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (b < 0xF0) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};  // no overlong 4-byte forms
  if (b < 0xF4) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

}  // namespace

Utf8Scan utf8_scan(std::string_view s, size_t pos) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + pos;
  const size_t avail = s.size() - pos;
  const uint8_t b0 = p[0];
  if (b0 < 0x80) return {Utf8Scan::kValid, 1, b0};
  const LeadRule rule = lead_rule(b0);
  if (rule.n == 0) return {Utf8Scan::kInvalid, 1, 0};
  char32_t cp = b0 & (0xFF >> (rule.n + 1));
  for (uint8_t k = 1; k < rule.n; ++k) {
    if (k == avail) return {Utf8Scan::kIncomplete, k, 0};
    const uint8_t b = p[k];
    const uint8_t lo = k == 1 ? rule.lo : 0x80;
    const uint8_t hi = k == 1 ? rule.hi : 0xBF;
    if (b < lo || b > hi) return {Utf8Scan::kInvalid, k, 0};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {Utf8Scan::kValid, rule.n, cp};
}

size_t utf8_valid_run(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size()) {
    // ASCII runs dominate code and prompts: test eight bytes at a time.
    if (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if ((w & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const Utf8Scan c = utf8_scan(s, i);
    if (c.kind != Utf8Scan::kValid) break;
    i += c.n_bytes;
  }
  return i - pos;
}

void utf8_append(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t utf8_append_lossy(std::string_view s, bool final, std::string* out) {
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";
  size_t i = 0;
  while (i < s.size()) {
    const size_t run = utf8_valid_run(s, i);
    out->append(s.data() + i, run);
    i += run;
    if (i == s.size()) break;
    const Utf8Scan c = utf8_scan(s, i);
    if (c.kind == Utf8Scan::kIncomplete && !final) return i;
    out->append(kReplacement, 3);
    i += c.n_bytes;
  }
  return s.size();
}

}  // namespace anchorage::text

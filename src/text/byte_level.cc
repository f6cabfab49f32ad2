#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace anchorage::text {

namespace {

bool stands_for_itself(int b) {
  return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

struct Alphabet {
  std::array<char32_t, 256> char_of_byte{};
  std::array<int16_t, 512> byte_of_char{};  // every alphabet character is below U+0200
};

const Alphabet& alphabet() {
  static const Alphabet a = [] {
    Alphabet t;
    t.byte_of_char.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const char32_t c = stands_for_itself(b) ? static_cast<char32_t>(b) : next++;
      t.char_of_byte[b] = c;
      t.byte_of_char[c] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return a;
}

}  // namespace

char32_t byte_level_char(uint8_t b) {
  return alphabet().char_of_byte[b];
}

int byte_level_byte(char32_t cp) {
  return cp < alphabet().byte_of_char.size() ? alphabet().byte_of_char[cp] : -1;
}

bool byte_level_to_bytes(std::string_view piece, std::string* bytes) {
  bytes->clear();
  bytes->reserve(piece.size());  // at most one byte per character: one allocation, not a growth
  size_t i = 0;
  while (i < piece.size()) {
    const Utf8Scan c = utf8_scan(piece, i);
    if (c.kind != Utf8Scan::kValid) return false;
    const int b = byte_level_byte(c.cp);
    if (b < 0) return false;
    bytes->push_back(static_cast<char>(b));
    i += c.n_bytes;
  }
  return true;
}

std::string byte_level_from_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) utf8_append(byte_level_char(static_cast<uint8_t>(ch)), &out);
  return out;
}

}  // namespace anchorage::text

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

size_t byte_level_decode(std::string_view piece, char* out) {
  // Every alphabet character is below U+0200: one byte, or a lead byte 0xC2-0xC7 and one
  // continuation byte. Anything else is a character outside the alphabet or not UTF-8 at all,
  // so the general UTF-8 scan is never needed (it was most of a vocabulary's decoding).
  const Alphabet& a = alphabet();
  const auto* p = reinterpret_cast<const uint8_t*>(piece.data());
  const size_t size = piece.size();
  size_t n = 0;
  for (size_t i = 0; i < size;) {
    char32_t cp = p[i];
    if (cp < 0x80) {
      ++i;
    } else if (cp >= 0xC2 && cp <= 0xC7 && i + 1 < size && (p[i + 1] & 0xC0) == 0x80) {
      cp = ((cp & 0x1F) << 6) | (p[i + 1] & 0x3F);
      i += 2;
    } else {
      return kNotByteLevel;
    }
    const int b = a.byte_of_char[cp];
    if (b < 0) return kNotByteLevel;
    out[n++] = static_cast<char>(b);
  }
  return n;
}

std::string byte_level_from_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) utf8_append(byte_level_char(static_cast<uint8_t>(ch)), &out);
  return out;
}

}  // namespace anchorage::text

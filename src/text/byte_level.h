// The byte-level alphabet of GPT-2-style BPE vocabularies (HF `ByteLevel`): every byte 0..255
// stands for one printable Unicode character, so a vocabulary of strings can hold any byte
// sequence. Bytes 33..126, 161..172 and 174..255 stand for themselves; the other 68 bytes, in
// order, for U+0100, U+0101, ... (so the space 0x20 is U+0120 'Ġ' and '\n' is U+010A 'Ċ').
// Pure functions over constant tables: any thread may call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anchorage::text {

// The character that stands for byte b.
char32_t byte_level_char(uint8_t b);

// The byte that character cp stands for, or -1 when cp is not in the alphabet.
int byte_level_byte(char32_t cp);

// What byte_level_decode() returns for a piece that is not one.
inline constexpr size_t kNotByteLevel = ~size_t{0};

// A vocabulary piece (UTF-8 of alphabet characters) -> the raw bytes it stands for, written to
// out (room for piece.size() bytes: at most one byte per character); their count, or
// kNotByteLevel when the piece is not valid UTF-8 or holds a character outside the alphabet.
size_t byte_level_decode(std::string_view piece, char* out);

// Raw bytes -> the vocabulary piece that spells them.
std::string byte_level_from_bytes(std::string_view bytes);

}  // namespace anchorage::text

// Q3_K's codes as a panel keeps them (docs/kernels.md "Q3_K's codes in a panel"). A GGUF Q3_K
// block spreads a weight's 3-bit code over two places: its low 2 bits in a qs byte, its high bit
// in an hmask byte, so a kernel took 2-3 shifts, 2 masks and an OR per code. A panel holds the
// same 96 bytes as three bytes per input slot i (i < 32), in which six of the eight codes of
// inputs 128h + 32t + i are whole 3-bit fields:
//   A (byte i):      code(0,0) bits 0-2, code(0,1) bits 3-5, low 2 bits of code(0,2) at bits 6-7
//   B (byte 32 + i): code(1,0) bits 0-2, code(1,1) bits 3-5, low 2 bits of code(1,2) at bits 6-7
//   C (byte 64 + i): code(0,3) bits 0-2, code(1,3) bits 3-5, high bit of code(0,2) at bit 6,
//                    high bit of code(1,2) at bit 7
// where code(h,t) = ((qs[32h + i] >> 2t) & 3) | ((hmask[i] >> (4h + t)) & 1) << 2 is the GGUF
// code (the weight is d * scale * (code - 4)). The scales and d keep GGUF's bytes.
//
// The rows of a k block (a byte row: one byte of each of the 32 lanes, kernels/panel_layout.h)
// keep GGUF's numbers in the code, 0-31 A, 32-63 B, 64-95 C, 96-107 the scales, 108-109 d, but
// the panel stores them in the order VNNI's decode tile reads them (q3_k_row): the scales,
// then each slot quad's A and C rows side by side, then the B rows, then d. That tile thus
// reads a k block from its first byte to its last, one ascending stream the hardware
// prefetcher follows on its own; in GGUF's order (the scales first from the block's end, then
// A and C a KiB apart) it could not, and its software prefetches left it at 0.6-0.7 of a plain
// read (docs/kernels.md "Q3_K's rows in reading order"). Q2_K's panel does the same for its
// rows (q2_k_row; docs/kernels.md "Q2_K's rows in reading order"), and Q6_K's (q6_k_row; "Q6_K's
// rows in reading order").
#pragma once

#include <cstdint>

#include "kernels/simd/force_inline.h"

namespace anchorage::kernels {

// Where the panel keeps byte row r of a Q3_K k block: rows 96-107 (the scales) at 0-11, slot
// quad g's A rows (4g .. 4g + 3) at 12 + 8g and its C rows (64 + 4g ..) at 16 + 8g, the B rows
// (32-63) at 76-107, d (108-109) where it was. A quad's 4 rows stay together and start on a
// multiple of 4 (kernels/panel_layout.h), and every 64-byte line holds rows of one kind.
// Always inlined: the ISA files, built with different -m flags, call it (an out-of-line copy
// the linker merged could carry one file's instructions into another's callers).
ANCHORAGE_FORCE_INLINE constexpr int q3_k_row(int r) {
  if (r >= 108) return r;
  if (r >= 96) return r - 96;
  if (r >= 64) return 16 + 8 * ((r - 64) / 4) + (r - 64) % 4;
  if (r >= 32) return r + 44;
  return 12 + 8 * (r / 4) + r % 4;
}

// Where the panel keeps byte row r of a Q2_K k block (GGUF: scales 0-15, qs 16-79, d 80-81,
// dmin 82-83), in the order VNNI's decode tile reads them: four groups of 20 rows, group
// G = 2h + sub (inputs 128h + 32t + 16sub .. + 15) holding qs rows 16 + 16G .. + 15 (its four
// quads) at 20G .. 20G + 15 and then the scale rows of its sub-blocks 8h + 2t + sub (t = 0 .. 3)
// at 20G + 16 + t; d and dmin where they were. A group is 640 bytes, ten whole 64-byte lines,
// each of one kind; a quad starts on a multiple of 4. Always inlined, as q3_k_row.
ANCHORAGE_FORCE_INLINE constexpr int q2_k_row(int r) {
  if (r >= 80) return r;
  if (r >= 16) return 20 * ((r - 16) / 16) + (r - 16) % 16;
  return 20 * (2 * (r / 8) + r % 2) + 16 + (r % 8) / 2;
}

// Where the panel keeps byte row r of a Q6_K k block (GGUF: ql 0-127, qh 128-191, scales
// 192-207, d 208-209), in the order VNNI's decode tile reads them: four groups of 52 rows, group
// G = 2h + sub (inputs 128h + 32t + 16sub .. + 15) holding, for each of its input quads
// g = 4sub .. 4sub + 3, the ql quad 64h + 4g, the ql quad 64h + 32 + 4g and the qh quad
// 128 + 32h + 4g side by side (12 rows from 52G + 12(g % 4)), and then the scale rows of its
// sub-blocks 8h + 2t + sub (t = 0 .. 3) at 52G + 48 + t; d where it was. A group is 1,664 bytes,
// 26 whole 64-byte lines, each of one kind. Always inlined, as q3_k_row.
ANCHORAGE_FORCE_INLINE constexpr int q6_k_row(int r) {
  if (r >= 208) return r;
  if (r >= 192) {
    const int j = r - 192;
    return 52 * (2 * (j / 8) + j % 2) + 48 + (j % 8) / 2;
  }
  if (r >= 128) {
    const int e = (r - 128) % 32, g = e / 4;
    return 52 * (2 * ((r - 128) / 32) + g / 4) + 12 * (g % 4) + 8 + e % 4;
  }
  const int e = r % 32, g = e / 4, part = (r % 64) / 32;
  return 52 * (2 * (r / 64) + g / 4) + 12 * (g % 4) + 4 * part + e % 4;
}

// The same for the kernels that walk Q3_K (kQ3) and Q2_K blocks alike.
template <bool kQ3>
ANCHORAGE_FORCE_INLINE constexpr int q3_q2_k_row(int r) {
  return kQ3 ? q3_k_row(r) : q2_k_row(r);
}

// The code of input 128h + 32t + i from its slot's three panel bytes.
constexpr int q3_k_code(uint8_t a, uint8_t b, uint8_t c, int h, int t) {
  if (t == 2) return (((h ? b : a) >> 6) & 3) | (((c >> (6 + h)) & 1) << 2);
  if (t == 3) return (c >> (3 * h)) & 7;
  return ((h ? b : a) >> (3 * t)) & 7;
}

// The panel's A, B, C of slot i -> GGUF's hmask[i], qs[i], qs[32 + i] (the packer,
// kernels/packed_weight.cc, does the opposite).
constexpr void q3_k_from_panel(uint8_t a, uint8_t b, uint8_t c, uint8_t* hm, uint8_t* q0,
                               uint8_t* q1) {
  int m = 0, q[2] = {0, 0};
  for (int h = 0; h < 2; ++h) {
    for (int t = 0; t < 4; ++t) {
      const int code = q3_k_code(a, b, c, h, t);
      q[h] |= (code & 3) << (2 * t);
      m |= (code >> 2) << (4 * h + t);
    }
  }
  *hm = uint8_t(m);
  *q0 = uint8_t(q[0]);
  *q1 = uint8_t(q[1]);
}

}  // namespace anchorage::kernels

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
// code (the weight is d * scale * (code - 4)). The scales and d stay where GGUF has them.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

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

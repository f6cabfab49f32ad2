// PanelLayout: where a k block of a quantized panel (kernels/packed_weight.h) keeps each byte of
// its 32 lanes' GGUF blocks. One definition for the packer, get_row() / at(), the f32 unpackers'
// and the scalar path's K-quant offsets (panel_byte) and the specs in docs/kernels.md; the SIMD
// kernels spell the same offsets with their types' constants.
//
// A k block holds the 32 lanes' blocks of bb bytes in bb * 32 bytes, byte row by byte row. Byte
// b of lane l sits at
//   - b * 32 + l: byte-interleaved, the 32 lanes' byte b side by side (a scale, an f16 row of
//     32 lanes is then two contiguous byte rows); or, for b inside the type's quad run
//     [quad_begin, quad_end),
//   - q * 32 + 4 * l + (b - q), q = b rounded down to quad_begin + a multiple of 4: the quad of
//     bytes q .. q + 3 of each lane side by side, lanes in order.
// A quad's 4 byte rows fill the same 128 bytes either way (a run is a multiple of 4 long), so a
// quad's address does not depend on the layout; only its inside does. What the quad
// gives: the integer dot products multiply 4 consecutive inputs of a lane in one 32-bit lane
// (vpmaddubsw + vpmaddwd, vpdpbusd), and in every quantized type the code bytes of 4
// consecutive inputs are a quad; byte-interleaved they had to be transposed first (AVX2's
// one-row paths spent 11-16 % of their time on it: docs/performance.md "What the panel layout
// costs AVX2"). The scales, mins and f16 fields stay byte-interleaved.
// The byte rows (b * 32 above, b a byte of the GGUF block) are in GGUF's order for every type but
// Q3_K, Q2_K and Q6_K, whose panels put them in VNNI's decode tile's reading order (kernels/
// q3_k_codes.h, q3_k_row, q2_k_row and q6_k_row): row(b) is where byte row b sits.
// Everything here is always inlined: the ISA files, built with different -m flags, call it (the
// f32 unpackers and the scalar path spell a panel's offsets through it), and an out-of-line copy
// the linker merged could carry one file's instructions into another's callers.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/q3_k_codes.h"

namespace anchorage::kernels {

struct PanelLayout {
  static constexpr int kLanes = 32;  // PackedWeight::kPanel
  int quad_begin = 0;                // bytes [quad_begin, quad_end) of a block go in quads
  int quad_end = 0;
  enum class Rows : uint8_t { kGguf, kQ3K, kQ2K, kQ6K };  // the order the byte rows are kept in
  Rows rows = Rows::kGguf;

  ANCHORAGE_FORCE_INLINE constexpr bool in_quads(int b) const {
    return b >= quad_begin && b < quad_end;
  }
  // Where byte row b of the block sits (a quad's first row maps to a quad's first row).
  ANCHORAGE_FORCE_INLINE constexpr int row(int b) const {
    return rows == Rows::kQ3K   ? q3_k_row(b)
           : rows == Rows::kQ2K ? q2_k_row(b)
           : rows == Rows::kQ6K ? q6_k_row(b)
                                : b;
  }
  // Offset of byte b of lane l's block within a k block of a panel.
  ANCHORAGE_FORCE_INLINE constexpr int64_t offset(int b, int l) const {
    if (!in_quads(b)) return int64_t(row(b)) * kLanes + l;
    const int q = b - (b - quad_begin) % 4;
    return int64_t(row(q)) * kLanes + 4 * l + (b - q);
  }
};

// The layout of a quantized type's k blocks (a plain type has no quad run).
ANCHORAGE_FORCE_INLINE constexpr PanelLayout panel_layout(core::DType t) {
  switch (t) {
    case core::DType::kQ8_0:  // d interleaved; the 32 quants
    case core::DType::kQ4_0:  // d; the 16 nibble bytes
    case core::DType::kIQ4_NL:
      return {2, 2 + (t == core::DType::kQ8_0 ? 32 : 16)};
    case core::DType::kQ5_0:  // d; the 4 bytes of fifth bits and the 16 nibble bytes
      return {2, 22};
    case core::DType::kQ4_1:  // d, m; the 16 nibble bytes
      return {4, 20};
    case core::DType::kQ5_1:  // d, m; the fifth bits and the nibbles
      return {4, 24};
    case core::DType::kQ4_K:  // d, dmin, 12 scale bytes interleaved; the 128 nibble bytes
      return {16, 144};
    case core::DType::kQ5_K:  // Q4_K's 16 interleaved; the 32 fifth-bit bytes and 128 nibbles
      return {16, 176};
    case core::DType::kQ6_K:  // the 128 nibble bytes and 64 high-bit bytes; scales, d interleaved;
      return {0, 192, PanelLayout::Rows::kQ6K};  // the rows in reading order
    case core::DType::kQ3_K:  // the codes, re-cut (kernels/q3_k_codes.h); scales, d interleaved;
      return {0, 96, PanelLayout::Rows::kQ3K};  // the rows in reading order
    case core::DType::kQ2_K:  // scales interleaved; the 2-bit codes; d, dmin interleaved; the
      return {16, 80, PanelLayout::Rows::kQ2K};  // rows in reading order
    case core::DType::kIQ4_XS:  // d and the 6 scale bytes interleaved; the 128 nibble bytes
      return {8, 136};
    default:
      return {};
  }
}

}  // namespace anchorage::kernels

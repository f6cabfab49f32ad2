// Element types of weights and state buffers, and the exact conversions between them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace anchorage::core {

// Plain types (f32, bf16, f16) and the block-quantized weight types of GGUF files (ggml's
// layouts: docs/gguf.md, kernels/quant.cc). Quantized types hold weights only, never state.
// Values are appended, never renumbered: the unpackers switch on the value.
enum class DType : uint8_t {
  kF32 = 0,
  kBF16 = 1,
  kF16 = 2,
  kQ8_0 = 3,
  kQ4_K = 4,
  kQ6_K = 5,
  kQ4_0 = 6,
  kQ4_1 = 7,
  kQ5_0 = 8,
  kQ5_1 = 9,
  kQ5_K = 10,
  kQ3_K = 11,
  kQ2_K = 12,
  kIQ4_NL = 13,
  kIQ4_XS = 14,
};
inline constexpr int kDTypeCount = 15;

inline bool dtype_is_quantized(DType t) {
  return t != DType::kF32 && t != DType::kBF16 && t != DType::kF16;
}

// Bytes of one element of a plain type; 0 for a quantized type (use the block sizes below).
inline int64_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    default:
      return 0;
  }
}

// Elements per block and bytes per block (a plain type is a block of one element).
inline int64_t dtype_block_elements(DType t) {
  switch (t) {
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kIQ4_NL:
      return 32;
    case DType::kQ4_K:
    case DType::kQ6_K:
    case DType::kQ5_K:
    case DType::kQ3_K:
    case DType::kQ2_K:
    case DType::kIQ4_XS:
      return 256;
    default:
      return 1;
  }
}
inline int64_t dtype_block_bytes(DType t) {
  switch (t) {
    case DType::kQ8_0:
      return 34;  // f16 scale + 32 int8
    case DType::kQ4_K:
      return 144;  // f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles
    case DType::kQ6_K:
      return 210;  // 128 low nibbles, 64 high 2-bit pairs, 16 int8 scales, f16 d
    case DType::kQ4_0:
      return 18;  // f16 d, 16 bytes of nibbles
    case DType::kQ4_1:
      return 20;  // f16 d, f16 m, 16 bytes of nibbles
    case DType::kQ5_0:
      return 22;  // f16 d, 4 bytes of fifth bits, 16 bytes of nibbles
    case DType::kQ5_1:
      return 24;  // f16 d, f16 m, 4 bytes of fifth bits, 16 bytes of nibbles
    case DType::kQ5_K:
      return 176;  // Q4_K's 144 bytes with 32 bytes of fifth bits before the nibbles
    case DType::kQ3_K:
      return 110;  // 32 bytes of third bits, 64 of 2-bit pairs, 12 of 6-bit scales, f16 d
    case DType::kQ2_K:
      return 84;  // 16 bytes of 4-bit scale/min pairs, 64 of 2-bit pairs, f16 d, f16 dmin
    case DType::kIQ4_NL:
      return 18;  // f16 d, 16 bytes of nibbles indexing a fixed table
    case DType::kIQ4_XS:
      return 136;  // f16 d, u16 scale high bits, 4 bytes of scale low bits, 128 of nibbles
    default:
      return dtype_size(t);
  }
}
// Bytes of n elements (n a multiple of the block size for a quantized type).
inline int64_t dtype_row_bytes(DType t, int64_t n) {
  return n / dtype_block_elements(t) * dtype_block_bytes(t);
}
std::string_view dtype_name(DType t);
bool parse_dtype(std::string_view s, DType* out);

// bf16 -> f32 is exact (the bf16 bits are the high half of the f32).
inline float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// f32 -> bf16, round to nearest even; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

// IEEE half <-> f32 (f16 -> f32 exact; f32 -> f16 round to nearest even).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

}  // namespace anchorage::core

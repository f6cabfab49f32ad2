// Element types of weights and state buffers, and the exact conversions between them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace anchorage::core {

enum class DType : uint8_t { kF32 = 0, kBF16 = 1, kF16 = 2 };

inline int64_t dtype_size(DType t) {
  return t == DType::kF32 ? 4 : 2;
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

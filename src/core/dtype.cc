#include "core/dtype.h"

namespace anchorage::core {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "f32";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kQ8_0:
      return "q8_0";
    case DType::kQ4_K:
      return "q4_k";
    case DType::kQ6_K:
      return "q6_k";
    case DType::kQ4_0:
      return "q4_0";
    case DType::kQ4_1:
      return "q4_1";
    case DType::kQ5_0:
      return "q5_0";
    case DType::kQ5_1:
      return "q5_1";
    case DType::kQ5_K:
      return "q5_k";
    case DType::kQ3_K:
      return "q3_k";
    case DType::kQ2_K:
      return "q2_k";
    case DType::kIQ4_NL:
      return "iq4_nl";
    case DType::kIQ4_XS:
      return "iq4_xs";
  }
  return "?";
}

// The inverse of dtype_name(), so the two cannot disagree.
bool parse_dtype(std::string_view s, DType* out) {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (dtype_name(DType(i)) == s) {
      *out = DType(i);
      return true;
    }
  }
  return false;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      u = sign | uint32_t(127 - 15 - e) << 23 | mant << 13;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | mant << 13;
  } else {
    u = sign | (exp + 112) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow -> inf
  if (a < 0x38800000u) {                                  // subnormal or zero in f16
    if (a < 0x33000000u) return uint16_t(sign);
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14 + (113 - e) ... bring to f16 subnormal position
    uint32_t r = m >> (shift);
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return uint16_t(sign | r);
  }
  uint32_t r = a - (112u << 23);
  uint32_t lsb = (r >> 13) & 1u;
  r += 0xfffu + lsb;
  return uint16_t(sign | (r >> 13));
}

}  // namespace anchorage::core

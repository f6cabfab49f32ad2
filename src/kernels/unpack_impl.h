// Unpacking quantized weight panels to f32, written once and compiled into each ISA's GEMM
// file (gemm_scalar.cc, gemm_avx2.cc, gemm_avx512.cc), like gemm_block_impl.h: include it
// inside the file's anonymous namespace, after <cstdint>, core/dtype.h (for DType only) and
// kernels/panel_layout.h.
//
// Input: one k block of a quantized panel (kernels/packed_weight.h): the 32 lanes' GGUF blocks
// byte-interleaved, byte b of lane l at b * 32 + l, but for a type's quad run (kernels/
// panel_layout.h: every quantized type's code bytes), where it is at q * 32 + 4l +
// (b - q), q the first byte of b's quad (quad_row).
// Output: [B][32] f32, k-major (the panel
// order the GEMM tiles read). Every loop runs over the 32 lanes innermost on contiguous bytes,
// so the compiler vectorises it for the file's ISA; each value is the same IEEE operations as
// kernels/quant.cc's dequantizers (d * q; (d*sc) * q - dmin*m; (d*sc) * q; q * d + m;
// d * table[q]), with no contraction (-ffp-contract=off), so every ISA gives
// dequantize_row()'s bits.
// (No #includes here: the file is included inside a namespace.)
#pragma once

constexpr int kUnpackLanes = 32;

// Byte b of lane 0 of a k block whose byte b lies in a quad run starting at byte `run` (only
// run % 4 matters: the default serves every run that starts on a multiple of 4): lane l's at 4l
// from it.
inline const uint8_t* quad_row(const uint8_t* kb, int b, int run = 0) {
  const int q = b - (b - run) % 4;
  return kb + q * 32 + (b - q);
}

// Byte b of lane 0 of a type-kT k block, wherever the panel keeps it (kernels/panel_layout.h:
// in a quad or a byte-interleaved row, and for Q3_K, Q2_K and Q6_K in the rows' reading order).
template <core::DType kT>
inline const uint8_t* panel_byte(const uint8_t* kb, int b) {
  return kb + panel_layout(kT).offset(b, 0);
}

// core::f16_to_f32's bits, inlined (it is out of line and branchy, and a k block needs 32 of
// them): a subnormal is mant * 2^-24 (exact), the rest is a re-biased exponent.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    const float f = float(mant) * 0x1.0p-24f;
    __builtin_memcpy(&u, &f, 4);
    u |= sign;
  } else if (exp == 31) {
    u = sign | 0x7f800000u | mant << 13;
  } else {
    u = sign | (exp + 112) << 23 | mant << 13;
  }
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// The f16 at bytes b, b+1 of every lane.
inline void unpack_f16_field(const uint8_t* __restrict kb, int b, float* __restrict out) {
  for (int l = 0; l < kUnpackLanes; ++l)
    out[l] = half_to_float(uint16_t(kb[b * 32 + l] | (kb[(b + 1) * 32 + l] << 8)));
}

inline void unpack_q8_0(const uint8_t* __restrict kb, float* __restrict out) {
  float d[kUnpackLanes];
  unpack_f16_field(kb, 0, d);
  for (int i = 0; i < 32; ++i) {
    const int8_t* __restrict q = reinterpret_cast<const int8_t*>(quad_row(kb, 2 + i, 2));
    float* __restrict o = out + i * 32;
    for (int l = 0; l < kUnpackLanes; ++l) o[l] = float(q[4 * l]) * d[l];
  }
}

// Q4_K sub-block j's (d * sc) and (dmin * m) for every lane.
inline void q4_k_lane_scales(const uint8_t* __restrict kb, float (*__restrict d1)[kUnpackLanes],
                             float (*__restrict m1)[kUnpackLanes]) {
  float d[kUnpackLanes], dmin[kUnpackLanes];
  unpack_f16_field(kb, 0, d);
  unpack_f16_field(kb, 2, dmin);
  for (int l = 0; l < kUnpackLanes; ++l) {
    uint8_t s[12];
    for (int j = 0; j < 12; ++j) s[j] = kb[(4 + j) * 32 + l];
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
      } else {
        sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
      }
      d1[j][l] = d[l] * float(sc);
      m1[j][l] = dmin[l] * float(m);
    }
  }
}

inline void unpack_q4_k(const uint8_t* __restrict kb, float* __restrict out) {
  float d1[8][kUnpackLanes], m1[8][kUnpackLanes];
  q4_k_lane_scales(kb, d1, m1);
  for (int i = 0; i < 4; ++i) {
    for (int e = 0; e < 32; ++e) {
      const uint8_t* __restrict q = quad_row(kb, 16 + 32 * i + e);
      float* __restrict lo = out + (64 * i + e) * 32;
      float* __restrict hi = out + (64 * i + 32 + e) * 32;
      for (int l = 0; l < kUnpackLanes; ++l) {
        lo[l] = d1[2 * i][l] * float(q[4 * l] & 0xF) - m1[2 * i][l];
        hi[l] = d1[2 * i + 1][l] * float(q[4 * l] >> 4) - m1[2 * i + 1][l];
      }
    }
  }
}

// Q6_K: ql 0-127 and qh 128-191 in quads, the int8 scales at 192, d at 208; each byte where the
// panel's row order puts it (panel_byte).
inline void unpack_q6_k(const uint8_t* __restrict kb, float* __restrict out) {
  const auto at = [kb](int b) { return panel_byte<core::DType::kQ6_K>(kb, b); };
  float d[kUnpackLanes];
  unpack_f16_field(kb, q6_k_row(208), d);
  float ds[16][kUnpackLanes];
  for (int j = 0; j < 16; ++j) {
    const int8_t* __restrict sc = reinterpret_cast<const int8_t*>(at(192 + j));
    for (int l = 0; l < kUnpackLanes; ++l) ds[j][l] = d[l] * float(sc[l]);
  }
  for (int h = 0; h < 2; ++h) {
    for (int e = 0; e < 32; ++e) {
      const uint8_t* __restrict ql0 = at(64 * h + e);
      const uint8_t* __restrict ql1 = at(64 * h + 32 + e);
      const uint8_t* __restrict qh = at(128 + 32 * h + e);
      const int is = 8 * h + e / 16;
      float* __restrict o = out + (128 * h + e) * 32;
      for (int l = 0; l < kUnpackLanes; ++l) {
        const int q1 = ((ql0[4 * l] & 0xF) | (((qh[4 * l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql1[4 * l] & 0xF) | (((qh[4 * l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql0[4 * l] >> 4) | (((qh[4 * l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql1[4 * l] >> 4) | (((qh[4 * l] >> 6) & 3) << 4)) - 32;
        o[l] = ds[is][l] * float(q1);
        o[32 * 32 + l] = ds[is + 2][l] * float(q2);
        o[64 * 32 + l] = ds[is + 4][l] * float(q3);
        o[96 * 32 + l] = ds[is + 6][l] * float(q4);
      }
    }
  }
}

// The 32-element blocks Q4_0, Q4_1, Q5_0, Q5_1: kHasMin picks (d, m) with y = q * d + m over
// y = (q - offset) * d; kBits 5 adds the u32 of fifth bits (bit j of byte j / 8 for element j).
template <bool kHasMin, int kBits>
inline void unpack_legacy(const uint8_t* __restrict kb, float* __restrict out) {
  float d[kUnpackLanes], m[kUnpackLanes];
  unpack_f16_field(kb, 0, d);
  if (kHasMin) unpack_f16_field(kb, 2, m);
  constexpr int kP = kHasMin ? 4 : 2;
  constexpr int kQs = kP + (kBits == 5 ? 4 : 0);
  constexpr int kOffset = kHasMin ? 0 : 1 << (kBits - 1);
  for (int j = 0; j < 32; ++j) {
    const uint8_t* __restrict q = quad_row(kb, kQs + j % 16, kP);
    const uint8_t* __restrict h = quad_row(kb, kP + j / 8, kP);
    float* __restrict o = out + j * 32;
    for (int l = 0; l < kUnpackLanes; ++l) {
      int code = j < 16 ? q[4 * l] & 0xF : q[4 * l] >> 4;
      if (kBits == 5) code |= ((h[4 * l] >> (j % 8)) & 1) << 4;
      if (kHasMin) {
        o[l] = float(code) * d[l] + m[l];
      } else {
        o[l] = float(code - kOffset) * d[l];
      }
    }
  }
}

// IQ4_NL's and IQ4_XS's 16 levels (ggml's table, as kernels/quant.cc).
constexpr int8_t kUnpackIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                         1,    13,   25,  38,  53,  69,  89,  113};

inline void unpack_iq4_nl(const uint8_t* __restrict kb, float* __restrict out) {
  float d[kUnpackLanes];
  unpack_f16_field(kb, 0, d);
  for (int j = 0; j < 32; ++j) {
    const uint8_t* __restrict q = quad_row(kb, 2 + j % 16, 2);
    float* __restrict o = out + j * 32;
    for (int l = 0; l < kUnpackLanes; ++l)
      o[l] = d[l] * float(kUnpackIq4Values[j < 16 ? q[4 * l] & 0xF : q[4 * l] >> 4]);
  }
}

// Q5_K: Q4_K's scales (same offsets) and nibbles (at byte 48), fifth bits at bit j of qh[e] (the
// qh and the nibbles in quads).
inline void unpack_q5_k(const uint8_t* __restrict kb, float* __restrict out) {
  float d1[8][kUnpackLanes], m1[8][kUnpackLanes];
  q4_k_lane_scales(kb, d1, m1);
  for (int j = 0; j < 8; ++j) {
    for (int e = 0; e < 32; ++e) {
      const uint8_t* __restrict q = quad_row(kb, 48 + 32 * (j / 2) + e);
      const uint8_t* __restrict h = quad_row(kb, 16 + e);
      float* __restrict o = out + (32 * j + e) * 32;
      for (int l = 0; l < kUnpackLanes; ++l) {
        const int lo = j % 2 == 0 ? q[4 * l] & 0xF : q[4 * l] >> 4;
        o[l] = d1[j][l] * float(lo | ((h[4 * l] >> j) & 1) << 4) - m1[j][l];
      }
    }
  }
}

// IQ4_XS: sub-block j's scale from scales_l (bytes 4..7) and scales_h (bytes 2, 3), its 16
// bytes of codes at byte 8 + 16j (in quads).
inline void unpack_iq4_xs(const uint8_t* __restrict kb, float* __restrict out) {
  float d[kUnpackLanes];
  unpack_f16_field(kb, 0, d);
  for (int j = 0; j < 8; ++j) {
    float dl[kUnpackLanes];
    for (int l = 0; l < kUnpackLanes; ++l) {
      const int sh = kb[2 * 32 + l] | kb[3 * 32 + l] << 8;
      const int ls = ((kb[(4 + j / 2) * 32 + l] >> (4 * (j % 2))) & 0xF) | ((sh >> (2 * j)) & 3)
                                                                               << 4;
      dl[l] = d[l] * float(ls - 32);
    }
    for (int e = 0; e < 32; ++e) {
      const uint8_t* __restrict q = quad_row(kb, 8 + 16 * j + e % 16);
      float* __restrict o = out + (32 * j + e) * 32;
      for (int l = 0; l < kUnpackLanes; ++l)
        o[l] = dl[l] * float(kUnpackIq4Values[e < 16 ? q[4 * l] & 0xF : q[4 * l] >> 4]);
    }
  }
}

// Q2_K: 16 sub-blocks of 16 with a 4-bit scale and min in bytes 0..15, 2-bit codes at byte 16
// (element 128h + 32s + e: bits 2s.. of byte 16 + 32h + e), d at 80, dmin at 82; each byte where
// the panel's row order puts it (panel_byte).
inline void unpack_q2_k(const uint8_t* __restrict kb, float* __restrict out) {
  const auto at = [kb](int b) { return panel_byte<core::DType::kQ2_K>(kb, b); };
  float d[kUnpackLanes], dmin[kUnpackLanes];
  unpack_f16_field(kb, q2_k_row(80), d);
  unpack_f16_field(kb, q2_k_row(82), dmin);
  for (int i = 0; i < 16; ++i) {
    float dl[kUnpackLanes], ml[kUnpackLanes];
    for (int l = 0; l < kUnpackLanes; ++l) {
      const int sc = at(i)[l];
      dl[l] = d[l] * float(sc & 0xF);
      ml[l] = dmin[l] * float(sc >> 4);
    }
    for (int e = 16 * i; e < 16 * i + 16; ++e) {
      const int h = e / 128, sh = (e % 128) / 32, el = e % 32;
      const uint8_t* __restrict q = at(16 + 32 * h + el);
      float* __restrict o = out + e * 32;
      for (int l = 0; l < kUnpackLanes; ++l)
        o[l] = dl[l] * float((q[4 * l] >> (2 * sh)) & 3) - ml[l];
    }
  }
}

// Q3_K: the codes at 0 (element 128h + 32s + e is q3_k_code(h, s) of bytes e, 32 + e, 64 + e:
// kernels/q3_k_codes.h), 6-bit scales at 96 (low nibbles in bytes 96..103, high pairs in
// 104..107), d at 108; each byte where the panel's row order puts it (panel_byte).
inline void unpack_q3_k(const uint8_t* __restrict kb, float* __restrict out) {
  const auto at = [kb](int b) { return panel_byte<core::DType::kQ3_K>(kb, b); };
  float d[kUnpackLanes];
  unpack_f16_field(kb, q3_k_row(108), d);
  for (int i = 0; i < 16; ++i) {
    float dl[kUnpackLanes];
    for (int l = 0; l < kUnpackLanes; ++l) {
      const int low = i < 8 ? at(96 + i)[l] & 0xF : at(96 + i - 8)[l] >> 4;
      const int high = (at(104 + i % 4)[l] >> (2 * (i / 4))) & 3;
      dl[l] = d[l] * float((low | high << 4) - 32);
    }
    for (int e = 16 * i; e < 16 * i + 16; ++e) {
      const int h = e / 128, sh = (e % 128) / 32, el = e % 32;
      const uint8_t* __restrict a = at(el);
      const uint8_t* __restrict b = at(32 + el);
      const uint8_t* __restrict c = at(64 + el);
      float* __restrict o = out + e * 32;
      for (int l = 0; l < kUnpackLanes; ++l)
        o[l] = dl[l] * float(q3_k_code(a[4 * l], b[4 * l], c[4 * l], h, sh) - 4);
    }
  }
}

// n k blocks of `dtype` (a core::DType value) from `blocks` into out ([n * B][32]). Block
// sizes are spelled out here rather than taken from core/dtype.h's inline functions: an inline
// function compiled with this file's ISA flags must not be emitted for the linker to pick.
inline void unpack_kblocks_impl(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    switch (core::DType(dtype)) {
      case core::DType::kQ8_0:
        unpack_q8_0(blocks + i * 34 * 32, out + i * 32 * 32);
        break;
      case core::DType::kQ4_K:
        unpack_q4_k(blocks + i * 144 * 32, out + i * 256 * 32);
        break;
      case core::DType::kQ6_K:
        unpack_q6_k(blocks + i * 210 * 32, out + i * 256 * 32);
        break;
      case core::DType::kQ4_0:
        unpack_legacy<false, 4>(blocks + i * 18 * 32, out + i * 32 * 32);
        break;
      case core::DType::kQ4_1:
        unpack_legacy<true, 4>(blocks + i * 20 * 32, out + i * 32 * 32);
        break;
      case core::DType::kQ5_0:
        unpack_legacy<false, 5>(blocks + i * 22 * 32, out + i * 32 * 32);
        break;
      case core::DType::kQ5_1:
        unpack_legacy<true, 5>(blocks + i * 24 * 32, out + i * 32 * 32);
        break;
      case core::DType::kIQ4_NL:
        unpack_iq4_nl(blocks + i * 18 * 32, out + i * 32 * 32);
        break;
      case core::DType::kQ5_K:
        unpack_q5_k(blocks + i * 176 * 32, out + i * 256 * 32);
        break;
      case core::DType::kIQ4_XS:
        unpack_iq4_xs(blocks + i * 136 * 32, out + i * 256 * 32);
        break;
      case core::DType::kQ3_K:
        unpack_q3_k(blocks + i * 110 * 32, out + i * 256 * 32);
        break;
      case core::DType::kQ2_K:
        unpack_q2_k(blocks + i * 84 * 32, out + i * 256 * 32);
        break;
      default:
        break;
    }
  }
}

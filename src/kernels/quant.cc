// The block formats (ggml's layouts, QK_K = 256), as this file reads and writes them:
//
//   Q8_0, 32 elements, 34 bytes:  f16 d | int8 q[32]                 y = q * d
//   Q4_K, 256 elements, 144 bytes: f16 d | f16 dmin | scales[12] | qs[128]
//     8 sub-blocks of 32, each with a 6-bit scale sc and 6-bit min m packed in scales[12]
//     (sub-block j < 4: sc = scales[j] & 63, m = scales[j+4] & 63; j >= 4: the low 4 bits in
//     scales[j+4] (sc low nibble, m high nibble), the high 2 bits in the top bits of
//     scales[j-4] (sc) and scales[j] (m)). Sub-blocks 2i and 2i+1 share qs[32i, 32i+32): the
//     low nibbles are sub-block 2i, the high nibbles 2i+1.   y = (d*sc) * q - (dmin*m)
//   Q6_K, 256 elements, 210 bytes: ql[128] | qh[64] | int8 scales[16] | f16 d
//     16 sub-blocks of 16 with an int8 scale. Each half of 128 elements uses 64 ql bytes and
//     32 qh bytes: element l + 32i (l < 32, i < 4) has its low 4 bits in ql[l + 32(i&1)]
//     (low nibble for i < 2, high for i >= 2) and its high 2 bits at bit 2i of qh[l].
//     q is stored + 32.                                       y = (d*sc) * (q - 32)
//
// The 32-element "legacy" blocks: 16 bytes qs, element j < 16 in the low nibble of qs[j],
// element j + 16 in its high nibble; Q5_x add a little-endian u32 qh whose bit j is element
// j's fifth bit (value 16).
//   Q4_0, 18 bytes: f16 d | qs[16]                       y = (q - 8) * d
//   Q4_1, 20 bytes: f16 d | f16 m | qs[16]               y = q * d + m
//   Q5_0, 22 bytes: f16 d | qh[4] | qs[16]               y = (q - 16) * d
//   Q5_1, 24 bytes: f16 d | f16 m | qh[4] | qs[16]       y = q * d + m
//   IQ4_NL, 18 bytes: f16 d | qs[16]                     y = d * kIq4Values[q]
// The other 256-element blocks:
//   Q5_K, 176 bytes: f16 d | f16 dmin | scales[12] | qh[32] | qs[128]
//     Q4_K's layout and scales plus a fifth bit: element l + 32j of sub-block j (pair i =
//     j / 2 of qs as in Q4_K) has it at bit j of qh[l].        y = (d*sc) * q - (dmin*m)
//   Q3_K, 110 bytes: hmask[32] | qs[64] | scales[12] | f16 d
//     16 sub-blocks of 16 with 6-bit scales stored + 32: scale i has its low 4 bits in the low
//     (i < 8) or high (i >= 8) nibble of scales[i % 8] and its high 2 bits at bit 2(i / 4) of
//     scales[8 + i % 4]. Each half h of 128 elements uses qs[32h, 32h+32): element
//     128h + 32s + l (s < 4, l < 32) is bits 2s..2s+1 of qs[32h + l] plus a third bit (value
//     4) at bit 4h + s of hmask[l]; it is stored + 4.          y = (d*(sc - 32)) * (q - 4)
//   Q2_K, 84 bytes: scales[16] | qs[64] | f16 d | f16 dmin
//     16 sub-blocks of 16, scales[i] = sc | m << 4; elements laid out as Q3_K's 2-bit part.
//                                                              y = (d*sc) * q - (dmin*m)
//   IQ4_XS, 136 bytes: f16 d | u16 scales_h | scales_l[4] | qs[128]
//     8 sub-blocks of 32 with 6-bit scales stored + 32: low 4 bits in nibble j % 2 of
//     scales_l[j / 2], high 2 bits at bit 2j of scales_h; sub-block j's 16 bytes of qs hold its
//     elements as an IQ4_NL block's do.                       y = (d*(sc - 32)) * kIq4Values[q]
// Each y is computed as written, every operation rounded to f32 (no fused multiply-add).
#include "kernels/quant.h"

#include <cmath>
#include <cstring>

#include "core/check.h"

namespace anchorage::kernels {

namespace {

using core::DType;

constexpr int kQk8 = 32;
constexpr int kQkK = 256;

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
void store_u16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}

// The f16 scale written for a block whose largest needed scale is `want`: the nearest f16,
// one f16 step up if that is below `want` (so `levels * d` still covers the block's range).
uint16_t scale_f16(float want) {
  uint16_t h = core::f32_to_f16(want);
  if (core::f16_to_f32(h) < want && h < 0x7bffu) ++h;
  return h;
}

int clamp_int(long v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : int(v);
}

// ---- Q8_0 ----

void dequantize_q8_0(const uint8_t* b, float* y) {
  const float d = core::f16_to_f32(load_u16(b));
  const int8_t* q = reinterpret_cast<const int8_t*>(b + 2);
  for (int i = 0; i < kQk8; ++i) y[i] = float(q[i]) * d;
}

void quantize_q8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int i = 0; i < kQk8; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const uint16_t dh = amax > 0.0f ? scale_f16(amax / 127.0f) : 0;
  const float d = core::f16_to_f32(dh);
  store_u16(b, dh);
  int8_t* q = reinterpret_cast<int8_t*>(b + 2);
  for (int i = 0; i < kQk8; ++i)
    q[i] = int8_t(d > 0.0f ? clamp_int(std::lround(x[i] / d), -127, 127) : 0);
}

// ---- Q4_K ----

// Sub-block j's 6-bit scale and min from the 12 packed bytes.
void q4k_scale_min(int j, const uint8_t* s, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

void dequantize_q4_k(const uint8_t* b, float* y) {
  const float d = core::f16_to_f32(load_u16(b));
  const float dmin = core::f16_to_f32(load_u16(b + 2));
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 16;
  for (int i = 0; i < 4; ++i) {  // 64 elements: sub-blocks 2i (low nibbles) and 2i+1 (high)
    int sc, m;
    q4k_scale_min(2 * i, scales, &sc, &m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    q4k_scale_min(2 * i + 1, scales, &sc, &m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    const uint8_t* q = qs + 32 * i;
    for (int l = 0; l < 32; ++l) y[64 * i + l] = d1 * float(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) y[64 * i + 32 + l] = d2 * float(q[l] >> 4) - m2;
  }
}

// The affine range of each of n sub-blocks of len values: scale[j] covers [lo, hi] with lo <= 0
// in `levels` steps, minv[j] = -lo (the stored min is subtracted, so codes are >= 0); returns
// the largest scale and min (the super-block's d and dmin are derived from them).
void subblock_ranges(const float* x, int n, int len, int levels, float* scale, float* minv,
                     float* max_scale, float* max_min) {
  *max_scale = 0.0f;
  *max_min = 0.0f;
  for (int j = 0; j < n; ++j) {
    float lo = 0.0f, hi = -INFINITY;
    for (int l = 0; l < len; ++l) {
      lo = std::fmin(lo, x[len * j + l]);
      hi = std::fmax(hi, x[len * j + l]);
    }
    scale[j] = (hi - lo) / float(levels);
    minv[j] = -lo;
    *max_scale = std::fmax(*max_scale, scale[j]);
    *max_min = std::fmax(*max_min, minv[j]);
  }
}

// Per-sub-block affine quantization shared by Q4_K and Q5_K: scales and mins as 6-bit
// multiples of d and dmin (packed as q4k_scale_min reads them), codes 0 .. levels.
void quantize_k_affine(const float* x, int levels, uint16_t* dh_out, uint16_t* mh_out, uint8_t* s,
                       uint8_t* q) {
  float scale[8], minv[8], max_scale, max_min;
  subblock_ranges(x, 8, 32, levels, scale, minv, &max_scale, &max_min);
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 63.0f) : 0;
  const uint16_t mh = max_min > 0.0f ? core::f32_to_f16(max_min / 63.0f) : 0;
  const float d = core::f16_to_f32(dh), dmin = core::f16_to_f32(mh);
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const int sc = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 63) : 0;
    const int m = dmin > 0.0f ? clamp_int(std::lround(minv[j] / dmin), 0, 63) : 0;
    if (j < 4) {
      s[j] = uint8_t(sc);
      s[j + 4] = uint8_t(m);
    } else {
      s[j + 4] = uint8_t((sc & 0xF) | ((m & 0xF) << 4));
      s[j - 4] |= uint8_t((sc >> 4) << 6);
      s[j] |= uint8_t((m >> 4) << 6);
    }
    const float step = d * float(sc), off = dmin * float(m);
    for (int l = 0; l < 32; ++l) {
      const float v = x[32 * j + l] + off;
      q[32 * j + l] = uint8_t(step > 0.0f ? clamp_int(std::lround(v / step), 0, levels) : 0);
    }
  }
  *dh_out = dh;
  *mh_out = mh;
}

void quantize_q4_k(const float* x, uint8_t* b) {
  uint16_t dh, mh;
  uint8_t q[kQkK];
  quantize_k_affine(x, 15, &dh, &mh, b + 4, q);
  store_u16(b, dh);
  store_u16(b + 2, mh);
  uint8_t* qs = b + 16;
  for (int i = 0; i < 4; ++i) {
    for (int l = 0; l < 32; ++l)
      qs[32 * i + l] = uint8_t(q[64 * i + l] | (q[64 * i + 32 + l] << 4));
  }
}

// ---- Q6_K ----

void dequantize_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = core::f16_to_f32(load_u16(b + 208));
  for (int h = 0; h < 2; ++h) {  // halves of 128 elements
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

void quantize_q6_k(const float* x, uint8_t* b) {
  float scale[16];
  float max_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    float amax = 0.0f;
    for (int l = 0; l < 16; ++l) amax = std::fmax(amax, std::fabs(x[16 * j + l]));
    scale[j] = amax / 31.0f;  // q in [-31, 31] of the stored [-32, 31]
    max_scale = std::fmax(max_scale, scale[j]);
  }
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 127.0f) : 0;
  const float d = core::f16_to_f32(dh);
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  uint8_t L[kQkK];
  for (int j = 0; j < 16; ++j) {
    const int s = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 127) : 0;
    sc[j] = int8_t(s);
    const float step = d * float(s);
    for (int l = 0; l < 16; ++l) {
      const int q = step > 0.0f ? clamp_int(std::lround(x[16 * j + l] / step), -32, 31) : 0;
      L[16 * j + l] = uint8_t(q + 32);
    }
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  for (int h = 0; h < 2; ++h) {
    const uint8_t* Lh = L + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
      ql[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
      ql[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
      qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
  store_u16(b + 208, dh);
}

// ---- 32-element blocks: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL ----

// IQ4_NL's and IQ4_XS's 16 levels (ggml's table): denser near zero, where weights cluster.
constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};

// Element j's 4-bit code in a 16-byte nibble array (j < 16 low nibbles, j >= 16 high).
int nibble(const uint8_t* qs, int j) {
  return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4;
}
void put_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = uint8_t((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}
uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

// has_min: Q4_1/Q5_1 (d, m) instead of Q4_0/Q5_0 (d, q stored + offset); bits: 4 or 5.
void dequantize_legacy(const uint8_t* b, float* y, bool has_min, int bits) {
  const float d = core::f16_to_f32(load_u16(b));
  const float m = has_min ? core::f16_to_f32(load_u16(b + 2)) : 0.0f;
  const uint8_t* p = b + (has_min ? 4 : 2);
  const uint32_t qh = bits == 5 ? load_u32(p) : 0;
  const uint8_t* qs = p + (bits == 5 ? 4 : 0);
  const int offset = has_min ? 0 : 1 << (bits - 1);
  for (int j = 0; j < kQk8; ++j) {
    const int q = nibble(qs, j) | int((qh >> j) & 1u) << 4;
    y[j] = has_min ? float(q) * d + m : float(q - offset) * d;
  }
}

void quantize_legacy(const float* x, uint8_t* b, bool has_min, int bits) {
  const int levels = (1 << bits) - 1;
  float lo = 0.0f, hi = 0.0f, amax = 0.0f;
  for (int j = 0; j < kQk8; ++j) {
    lo = std::fmin(lo, x[j]);
    hi = std::fmax(hi, x[j]);
    amax = std::fmax(amax, std::fabs(x[j]));
  }
  // With a min: levels steps from lo (lo <= 0) up to hi. Without: symmetric around 0, the
  // largest magnitude at level (levels - 1) / 2 steps from the offset.
  const float want = has_min ? (hi - lo) / float(levels) : amax / float((levels - 1) / 2);
  const uint16_t dh = want > 0.0f ? scale_f16(want) : 0;
  const float d = core::f16_to_f32(dh);
  const uint16_t mh = core::f32_to_f16(lo);
  const float m = core::f16_to_f32(mh);
  const int offset = has_min ? 0 : 1 << (bits - 1);
  uint8_t q[kQk8];
  uint32_t qh = 0;
  for (int j = 0; j < kQk8; ++j) {
    const float v = has_min ? (x[j] - m) / d : x[j] / d;
    const int l = d > 0.0f ? clamp_int(std::lround(v) + offset, 0, levels) : offset;
    q[j] = uint8_t(l);
    qh |= uint32_t(l >> 4) << j;
  }
  store_u16(b, dh);
  uint8_t* p = b + 2;
  if (has_min) {
    store_u16(p, mh);
    p += 2;
  }
  if (bits == 5) {
    store_u32(p, qh);
    p += 4;
  }
  put_nibbles(q, p);
}

// The index of the table level nearest v.
int nearest_iq4(float v) {
  int best = 0;
  for (int i = 1; i < 16; ++i) {
    if (std::fabs(v - float(kIq4Values[i])) < std::fabs(v - float(kIq4Values[best]))) best = i;
  }
  return best;
}

void dequantize_iq4_nl(const uint8_t* b, float* y) {
  const float d = core::f16_to_f32(load_u16(b));
  for (int j = 0; j < kQk8; ++j) y[j] = d * float(kIq4Values[nibble(b + 2, j)]);
}

void quantize_iq4_nl(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int j = 0; j < kQk8; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const uint16_t dh = amax > 0.0f ? scale_f16(amax / 113.0f) : 0;
  const float d = core::f16_to_f32(dh);
  uint8_t q[kQk8];
  for (int j = 0; j < kQk8; ++j) q[j] = uint8_t(d > 0.0f ? nearest_iq4(x[j] / d) : 8);
  store_u16(b, dh);
  put_nibbles(q, b + 2);
}

// ---- Q5_K ----

void dequantize_q5_k(const uint8_t* b, float* y) {
  const float d = core::f16_to_f32(load_u16(b));
  const float dmin = core::f16_to_f32(load_u16(b + 2));
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    q4k_scale_min(j, scales, &sc, &m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    const uint8_t* q = qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) {
      const int lo = j % 2 == 0 ? q[l] & 0xF : q[l] >> 4;
      y[32 * j + l] = d1 * float(lo | ((qh[l] >> j) & 1) << 4) - m1;
    }
  }
}

void quantize_q5_k(const float* x, uint8_t* b) {
  uint16_t dh, mh;
  uint8_t q[kQkK];
  quantize_k_affine(x, 31, &dh, &mh, b + 4, q);
  store_u16(b, dh);
  store_u16(b + 2, mh);
  uint8_t* qh = b + 16;
  uint8_t* qs = b + 48;
  std::memset(qh, 0, 32);
  for (int i = 0; i < 4; ++i) {
    for (int l = 0; l < 32; ++l) {
      const int lo = q[64 * i + l], hi = q[64 * i + 32 + l];
      qs[32 * i + l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
      qh[l] |= uint8_t(((lo >> 4) << (2 * i)) | ((hi >> 4) << (2 * i + 1)));
    }
  }
}

// ---- Q3_K and Q2_K: 16 sub-blocks of 16, 2-bit codes in the same order ----

// Element e (< 256) of a 2-bit code array qs[64]: half h = e / 128, shift group s, lane l.
int two_bits(const uint8_t* qs, int e) {
  const int h = e / 128, s = (e % 128) / 32, l = e % 32;
  return (qs[32 * h + l] >> (2 * s)) & 3;
}
void put_two_bits(const uint8_t* codes, uint8_t* qs) {
  std::memset(qs, 0, 64);
  for (int e = 0; e < kQkK; ++e) {
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    qs[32 * h + l] |= uint8_t((codes[e] & 3) << (2 * s));
  }
}

// Q3_K sub-block i's 6-bit stored scale (layout at the top of the file).
int q3k_scale(const uint8_t* sc, int i) {
  const int low = i < 8 ? sc[i] & 0xF : sc[i - 8] >> 4;
  const int high = (sc[8 + i % 4] >> (2 * (i / 4))) & 3;
  return low | high << 4;
}

void dequantize_q3_k(const uint8_t* b, float* y) {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* scales = b + 96;
  const float d = core::f16_to_f32(load_u16(b + 108));
  for (int e = 0; e < kQkK; ++e) {
    const float dl = d * float(q3k_scale(scales, e / 16) - 32);
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    const int third = (hmask[l] >> (4 * h + s)) & 1;
    y[e] = dl * float((two_bits(qs, e) | third << 2) - 4);
  }
}

void quantize_q3_k(const float* x, uint8_t* b) {
  float scale[16], max_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    float amax = 0.0f;
    for (int l = 0; l < 16; ++l) amax = std::fmax(amax, std::fabs(x[16 * j + l]));
    scale[j] = amax / 3.0f;  // codes -3 .. 3 of the stored -4 .. 3
    max_scale = std::fmax(max_scale, scale[j]);
  }
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 31.0f) : 0;
  const float d = core::f16_to_f32(dh);
  uint8_t* scales = b + 96;
  std::memset(scales, 0, 12);
  uint8_t codes[kQkK];
  for (int j = 0; j < 16; ++j) {
    const int sc = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 31) : 0;
    const int stored = sc + 32;
    scales[j % 8] |= uint8_t((stored & 0xF) << (j < 8 ? 0 : 4));
    scales[8 + j % 4] |= uint8_t((stored >> 4) << (2 * (j / 4)));
    const float step = d * float(sc);
    for (int l = 0; l < 16; ++l) {
      const int q = step > 0.0f ? clamp_int(std::lround(x[16 * j + l] / step), -4, 3) : 0;
      codes[16 * j + l] = uint8_t(q + 4);
    }
  }
  uint8_t* hmask = b;
  std::memset(hmask, 0, 32);
  for (int e = 0; e < kQkK; ++e) {
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    hmask[l] |= uint8_t((codes[e] >> 2) << (4 * h + s));
  }
  put_two_bits(codes, b + 32);
  store_u16(b + 108, dh);
}

void dequantize_q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = core::f16_to_f32(load_u16(b + 80));
  const float dmin = core::f16_to_f32(load_u16(b + 82));
  for (int e = 0; e < kQkK; ++e) {
    const uint8_t sc = scales[e / 16];
    const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
    y[e] = dl * float(two_bits(qs, e)) - ml;
  }
}

void quantize_q2_k(const float* x, uint8_t* b) {
  float scale[16], minv[16], max_scale, max_min;
  subblock_ranges(x, 16, 16, 3, scale, minv, &max_scale, &max_min);
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 15.0f) : 0;
  const uint16_t mh = max_min > 0.0f ? core::f32_to_f16(max_min / 15.0f) : 0;
  const float d = core::f16_to_f32(dh), dmin = core::f16_to_f32(mh);
  uint8_t codes[kQkK];
  for (int j = 0; j < 16; ++j) {
    const int sc = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 15) : 0;
    const int m = dmin > 0.0f ? clamp_int(std::lround(minv[j] / dmin), 0, 15) : 0;
    b[j] = uint8_t(sc | m << 4);
    const float step = d * float(sc), off = dmin * float(m);
    for (int l = 0; l < 16; ++l) {
      const float v = x[16 * j + l] + off;
      codes[16 * j + l] = uint8_t(step > 0.0f ? clamp_int(std::lround(v / step), 0, 3) : 0);
    }
  }
  put_two_bits(codes, b + 16);
  store_u16(b + 80, dh);
  store_u16(b + 82, mh);
}

// ---- IQ4_XS ----

void dequantize_iq4_xs(const uint8_t* b, float* y) {
  const float d = core::f16_to_f32(load_u16(b));
  const uint16_t scales_h = load_u16(b + 2);
  const uint8_t* scales_l = b + 4;
  for (int j = 0; j < 8; ++j) {
    const int ls = ((scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | ((scales_h >> (2 * j)) & 3) << 4;
    const float dl = d * float(ls - 32);
    const uint8_t* qs = b + 8 + 16 * j;
    for (int l = 0; l < 32; ++l) y[32 * j + l] = dl * float(kIq4Values[nibble(qs, l)]);
  }
}

void quantize_iq4_xs(const float* x, uint8_t* b) {
  float scale[8], max_scale = 0.0f;
  for (int j = 0; j < 8; ++j) {
    float amax = 0.0f;
    for (int l = 0; l < 32; ++l) amax = std::fmax(amax, std::fabs(x[32 * j + l]));
    scale[j] = amax / 113.0f;
    max_scale = std::fmax(max_scale, scale[j]);
  }
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 31.0f) : 0;
  const float d = core::f16_to_f32(dh);
  uint16_t scales_h = 0;
  uint8_t* scales_l = b + 4;
  std::memset(scales_l, 0, 4);
  for (int j = 0; j < 8; ++j) {
    const int sc = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 31) : 0;
    const int stored = sc + 32;
    scales_l[j / 2] |= uint8_t((stored & 0xF) << (4 * (j % 2)));
    scales_h |= uint16_t((stored >> 4) << (2 * j));
    const float step = d * float(sc);
    uint8_t q[32];
    for (int l = 0; l < 32; ++l)
      q[l] = uint8_t(step > 0.0f ? nearest_iq4(x[32 * j + l] / step) : 8);
    put_nibbles(q, b + 8 + 16 * j);
  }
  store_u16(b, dh);
  store_u16(b + 2, scales_h);
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  const int64_t be = core::dtype_block_elements(t), bb = core::dtype_block_bytes(t);
  ANCHORAGE_CHECK(n >= 0 && n % be == 0);
  const uint8_t* s = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::kF32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = core::bf16_to_f32(load_u16(s + 2 * i));
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = core::f16_to_f32(load_u16(s + 2 * i));
      return;
    case DType::kQ8_0:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q8_0(s + i * bb, dst + i * be);
      return;
    case DType::kQ4_K:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q4_k(s + i * bb, dst + i * be);
      return;
    case DType::kQ6_K:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q6_k(s + i * bb, dst + i * be);
      return;
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1: {
      const bool has_min = t == DType::kQ4_1 || t == DType::kQ5_1;
      const int bits = t == DType::kQ5_0 || t == DType::kQ5_1 ? 5 : 4;
      for (int64_t i = 0; i < n / be; ++i)
        dequantize_legacy(s + i * bb, dst + i * be, has_min, bits);
      return;
    }
    case DType::kQ5_K:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q5_k(s + i * bb, dst + i * be);
      return;
    case DType::kQ3_K:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q3_k(s + i * bb, dst + i * be);
      return;
    case DType::kQ2_K:
      for (int64_t i = 0; i < n / be; ++i) dequantize_q2_k(s + i * bb, dst + i * be);
      return;
    case DType::kIQ4_NL:
      for (int64_t i = 0; i < n / be; ++i) dequantize_iq4_nl(s + i * bb, dst + i * be);
      return;
    case DType::kIQ4_XS:
      for (int64_t i = 0; i < n / be; ++i) dequantize_iq4_xs(s + i * bb, dst + i * be);
      return;
  }
  ANCHORAGE_CHECK_MSG(false, "dequantize_row: unknown dtype");
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  const int64_t be = core::dtype_block_elements(t), bb = core::dtype_block_bytes(t);
  ANCHORAGE_CHECK(n >= 0 && n % be == 0);
  uint8_t* d = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::kF32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, core::f32_to_bf16(src[i]));
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, core::f32_to_f16(src[i]));
      return;
    case DType::kQ8_0:
      for (int64_t i = 0; i < n / be; ++i) quantize_q8_0(src + i * be, d + i * bb);
      return;
    case DType::kQ4_K:
      for (int64_t i = 0; i < n / be; ++i) quantize_q4_k(src + i * be, d + i * bb);
      return;
    case DType::kQ6_K:
      for (int64_t i = 0; i < n / be; ++i) quantize_q6_k(src + i * be, d + i * bb);
      return;
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1: {
      const bool has_min = t == DType::kQ4_1 || t == DType::kQ5_1;
      const int bits = t == DType::kQ5_0 || t == DType::kQ5_1 ? 5 : 4;
      for (int64_t i = 0; i < n / be; ++i) quantize_legacy(src + i * be, d + i * bb, has_min, bits);
      return;
    }
    case DType::kQ5_K:
      for (int64_t i = 0; i < n / be; ++i) quantize_q5_k(src + i * be, d + i * bb);
      return;
    case DType::kQ3_K:
      for (int64_t i = 0; i < n / be; ++i) quantize_q3_k(src + i * be, d + i * bb);
      return;
    case DType::kQ2_K:
      for (int64_t i = 0; i < n / be; ++i) quantize_q2_k(src + i * be, d + i * bb);
      return;
    case DType::kIQ4_NL:
      for (int64_t i = 0; i < n / be; ++i) quantize_iq4_nl(src + i * be, d + i * bb);
      return;
    case DType::kIQ4_XS:
      for (int64_t i = 0; i < n / be; ++i) quantize_iq4_xs(src + i * be, d + i * bb);
      return;
  }
  ANCHORAGE_CHECK_MSG(false, "quantize_row: unknown dtype");
}

}  // namespace anchorage::kernels

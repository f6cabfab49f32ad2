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

void quantize_q4_k(const float* x, uint8_t* b) {
  // Per sub-block: the range [lo, hi] with lo <= 0 (the stored min is subtracted, so >= 0).
  float scale[8], minv[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    float lo = 0.0f, hi = -INFINITY;
    for (int l = 0; l < 32; ++l) {
      lo = std::fmin(lo, x[32 * j + l]);
      hi = std::fmax(hi, x[32 * j + l]);
    }
    scale[j] = (hi - lo) / 15.0f;
    minv[j] = -lo;
    max_scale = std::fmax(max_scale, scale[j]);
    max_min = std::fmax(max_min, minv[j]);
  }
  const uint16_t dh = max_scale > 0.0f ? scale_f16(max_scale / 63.0f) : 0;
  const uint16_t mh = max_min > 0.0f ? core::f32_to_f16(max_min / 63.0f) : 0;
  const float d = core::f16_to_f32(dh), dmin = core::f16_to_f32(mh);
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    // Scales round up (the levels cover the range); mins to nearest.
    sc[j] = d > 0.0f ? clamp_int(long(std::ceil(scale[j] / d)), 0, 63) : 0;
    m[j] = dmin > 0.0f ? clamp_int(std::lround(minv[j] / dmin), 0, 63) : 0;
  }
  store_u16(b, dh);
  store_u16(b + 2, mh);
  uint8_t* s = b + 4;
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = uint8_t(sc[j]);
      s[j + 4] = uint8_t(m[j]);
    } else {
      s[j + 4] = uint8_t((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
      s[j - 4] |= uint8_t((sc[j] >> 4) << 6);
      s[j] |= uint8_t((m[j] >> 4) << 6);
    }
  }
  uint8_t q[kQkK];
  for (int j = 0; j < 8; ++j) {
    const float step = d * float(sc[j]), off = dmin * float(m[j]);
    for (int l = 0; l < 32; ++l) {
      const float v = x[32 * j + l] + off;
      q[32 * j + l] = uint8_t(step > 0.0f ? clamp_int(std::lround(v / step), 0, 15) : 0);
    }
  }
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
  }
  ANCHORAGE_CHECK_MSG(false, "quantize_row: unknown dtype");
}

}  // namespace anchorage::kernels

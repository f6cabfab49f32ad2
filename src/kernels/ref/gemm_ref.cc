#include "kernels/ref/gemm_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/check.h"

namespace anchorage::kernels {

void gemm_ref(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y,
              int64_t ldy) {
  const int64_t K = w.cols(), N = w.rows();
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(x[m * ldx + k], w.at(n, k), acc);
      y[m * ldy + n] = acc;
    }
  }
}

namespace {

// One block of activations: its scale, and its quants into q.
float quantize_block_ref(const float* x, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  for (int64_t i = 0; i < n; ++i)
    q[i] = int8_t(std::clamp(std::nearbyint(x[i] * id), -127.0f, 127.0f));
  return d;
}

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return core::f16_to_f32(h);
}

// The loops every integer-dot reference below shares: per row m its activations quantized in
// blocks of B inputs, then per output n, acc from +0.0f, acc = step(blk, a, xd, acc) for each
// weight block of the GGUF row in order (blk its bytes, a its B activation quants, xd their
// scale).
template <typename Step>
void int8_ref_rows(const float* x, int64_t M, int64_t ldx, const void* rows, core::DType type,
                   int64_t N, int64_t K, int64_t B, float* y, int64_t ldy, Step step) {
  const int64_t row_bytes = core::dtype_row_bytes(type, K);
  const int64_t block_bytes = core::dtype_block_bytes(type);
  std::vector<int8_t> xq(static_cast<size_t>(K));
  std::vector<float> xd(static_cast<size_t>(K / B));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t b = 0; b < K / B; ++b)
      xd[size_t(b)] = quantize_block_ref(x + m * ldx + b * B, B, xq.data() + b * B);
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* row = static_cast<const uint8_t*>(rows) + n * row_bytes;
      float acc = 0.0f;
      for (int64_t b = 0; b < K / B; ++b)
        acc = step(row + b * block_bytes, xq.data() + b * B, xd[size_t(b)], acc);
      y[m * ldy + n] = acc;
    }
  }
}

// Q4_K (ggml block: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles:
// byte 32i + e holds element 64i + e low and 64i + 32 + e high). Q5_K (kQ5): the same with qh[32]
// before the nibbles, element 32j + e's fifth bit, value 16, at bit j of qh[e]. Activations in
// blocks of 256.
template <bool kQ5>
float q4_k_block_ref(const uint8_t* blk, const int8_t* xq, float xd, float acc) {
  const uint8_t* sc12 = blk + 4;
  const uint8_t* qh = blk + 16;
  const uint8_t* qs = blk + (kQ5 ? 48 : 16);
  int32_t S = 0, Mn = 0;
  for (int j = 0; j < 8; ++j) {
    const int sc = j < 4 ? sc12[j] & 63 : (sc12[j + 4] & 0xF) | ((sc12[j - 4] >> 6) << 4);
    const int mn = j < 4 ? sc12[j + 4] & 63 : (sc12[j + 4] >> 4) | ((sc12[j] >> 6) << 4);
    int32_t dot = 0, sum = 0;
    for (int e = 0; e < 32; ++e) {
      const uint8_t byte = qs[32 * (j / 2) + e];
      const int8_t a = xq[32 * j + e];
      const int q = (j % 2 == 0 ? byte & 0xF : byte >> 4) + (kQ5 && ((qh[e] >> j) & 1) ? 16 : 0);
      dot += q * a;
      sum += a;
    }
    S += sc * dot;
    Mn += mn * sum;
  }
  acc = std::fma(float(S), half_at(blk) * xd, acc);
  return std::fma(-float(Mn), half_at(blk + 2) * xd, acc);
}

// Q3_K (ggml block: hmask[32], qs[64], scales[12], f16 d; per half n of 128 elements and shift
// s < 4, element 128n + 32s + l has bits 2s, 2s + 1 of qs[32n + l] and, as value 4, bit 4n + s
// of hmask[l], stored + 4; sub-block i = element / 16 has the 6-bit scale whose low 4 bits are
// the low (i < 8) or high nibble of scales[i % 8] and high 2 bits bits 2(i / 4) of
// scales[8 + i % 4], stored + 32). Activations in blocks of 256.
float q3_k_block_ref(const uint8_t* blk, const int8_t* xq, float xd, float acc) {
  int32_t S = 0;
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? blk[96 + i] & 0xF : blk[96 + i - 8] >> 4;
    const int sc = (low | ((blk[104 + i % 4] >> (2 * (i / 4))) & 3) << 4) - 32;
    int32_t dot = 0;
    for (int t = 0; t < 16; ++t) {
      const int e = 16 * i + t, n = e / 128, s = (e % 128) / 32, l = e % 32;
      const int q = ((blk[32 + 32 * n + l] >> (2 * s)) & 3) + 4 * ((blk[l] >> (4 * n + s)) & 1);
      dot += (q - 4) * xq[e];
    }
    S += sc * dot;
  }
  return std::fma(float(S), half_at(blk + 108) * xd, acc);
}

// Q2_K (ggml block: scales[16] = sc | m << 4, qs[64] laid out as Q3_K's 2-bit part, f16 d, f16
// dmin; y = d * sc * q - dmin * m). Activations in blocks of 256; Q4_K's two float steps.
float q2_k_block_ref(const uint8_t* blk, const int8_t* xq, float xd, float acc) {
  int32_t S = 0, Mn = 0;
  for (int i = 0; i < 16; ++i) {
    int32_t dot = 0, sum = 0;
    for (int t = 0; t < 16; ++t) {
      const int e = 16 * i + t, n = e / 128, s = (e % 128) / 32, l = e % 32;
      dot += ((blk[16 + 32 * n + l] >> (2 * s)) & 3) * xq[e];
      sum += xq[e];
    }
    S += (blk[i] & 0xF) * dot;
    Mn += (blk[i] >> 4) * sum;
  }
  acc = std::fma(float(S), half_at(blk + 80) * xd, acc);
  return std::fma(-float(Mn), half_at(blk + 82) * xd, acc);
}

// IQ4_NL's and IQ4_XS's 16 levels (ggml's kvalues_iq4nl).
const int kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                            1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_XS (ggml block: f16 d, u16 scales_h, scales_l[4], qs[128]; sub-block j of 32 has the
// 6-bit scale ls = (nibble j % 2 of scales_l[j / 2]) | (bits 2j, 2j + 1 of scales_h) << 4,
// stored + 32, and its elements in qs[16j, 16j + 16) as an IQ4_NL block's). Activations in
// blocks of 256: S = sum_j (ls_j - 32) * (sum of level * x_q over sub-block j);
// acc = fma(float(S), d * xd, acc).
float iq4_xs_block_ref(const uint8_t* blk, const int8_t* xq, float xd, float acc) {
  const int scales_h = blk[2] | blk[3] << 8;
  int32_t S = 0;
  for (int j = 0; j < 8; ++j) {
    const int lo = j % 2 == 0 ? blk[4 + j / 2] & 0xF : blk[4 + j / 2] >> 4;
    const int ls = lo + 16 * ((scales_h >> (2 * j)) & 3);
    int32_t dot = 0;
    for (int e = 0; e < 32; ++e) {
      const uint8_t byte = blk[8 + 16 * j + e % 16];
      dot += kIq4Levels[e < 16 ? byte & 0xF : byte >> 4] * xq[32 * j + e];
    }
    S += (ls - 32) * dot;
  }
  return std::fma(float(S), half_at(blk) * xd, acc);
}

// Q6_K (ggml block: ql[128], qh[64], int8 scales[16], f16 d; per half n of 128 elements and
// l < 32: element l, l + 32, l + 64, l + 96 are ql[l] low, ql[l + 32] low, ql[l] high,
// ql[l + 32] high, with qh[l] bits 0-1, 2-3, 4-5, 6-7 above, minus 32; scale of element i is
// scales[i / 16]). Activations in blocks of 256.
float q6_k_block_ref(const uint8_t* blk, const int8_t* xq, float xd, float acc) {
  int q[256];
  for (int half = 0; half < 2; ++half) {
    const uint8_t* ql = blk + 64 * half;
    const uint8_t* qh = blk + 128 + 32 * half;
    for (int l = 0; l < 32; ++l) {
      q[128 * half + l] = (ql[l] & 0xF) | ((qh[l] >> 0) & 3) << 4;
      q[128 * half + l + 32] = (ql[l + 32] & 0xF) | ((qh[l] >> 2) & 3) << 4;
      q[128 * half + l + 64] = (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4;
      q[128 * half + l + 96] = (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4;
    }
  }
  int32_t S = 0;
  for (int j = 0; j < 16; ++j) {
    int32_t dot = 0;
    for (int i = 0; i < 16; ++i) dot += (q[16 * j + i] - 32) * xq[16 * j + i];
    S += int32_t(static_cast<int8_t>(blk[192 + j])) * dot;
  }
  return std::fma(float(S), half_at(blk + 208) * xd, acc);
}

}  // namespace

void gemm_int8_ref(const float* x, int64_t M, int64_t ldx, const void* rows, core::DType type,
                   int64_t N, int64_t K, float* y, int64_t ldy) {
  if (type == core::DType::kQ4_K)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &q4_k_block_ref<false>);
  if (type == core::DType::kQ6_K)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &q6_k_block_ref);
  if (type == core::DType::kQ5_K)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &q4_k_block_ref<true>);
  if (type == core::DType::kIQ4_XS)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &iq4_xs_block_ref);
  if (type == core::DType::kQ3_K)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &q3_k_block_ref);
  if (type == core::DType::kQ2_K)
    return int8_ref_rows(x, M, ldx, rows, type, N, K, 256, y, ldy, &q2_k_block_ref);
  ANCHORAGE_CHECK(type == core::DType::kQ8_0 || type == core::DType::kQ4_0 ||
                  type == core::DType::kIQ4_NL || type == core::DType::kQ5_0 ||
                  type == core::DType::kQ4_1 || type == core::DType::kQ5_1);
  // Q8_0: f16 d, 32 int8. Q4_0 / IQ4_NL: f16 d, 16 bytes, element i < 16 the low nibble of byte
  // i, 16 + i the high; value q - 8 / kIq4Levels[q]. Q5_0: value (q + 16 * fifth bit) - 16.
  // Q4_1 / Q5_1 (f16 d, f16 m, then as Q4_0 / Q5_0): value q (+ 16 * fifth bit), and the min
  // a second step. Activations in blocks of 32.
  int8_ref_rows(x, M, ldx, rows, type, N, K, 32, y, ldy,
                [type](const uint8_t* blk, const int8_t* xq, float xd, float acc) {
                  int32_t sum = 0;
                  for (int i = 0; i < 32; ++i) {
                    int w;
                    if (type == core::DType::kQ8_0) {
                      w = static_cast<int8_t>(blk[2 + i]);
                    } else if (type == core::DType::kQ5_0 || type == core::DType::kQ5_1) {
                      // f16 d (, f16 m), u32 qh (element i's fifth bit at bit i), 16 bytes of
                      // nibbles.
                      const int h = type == core::DType::kQ5_0 ? 2 : 4;
                      uint32_t qh;
                      std::memcpy(&qh, blk + h, 4);
                      const int lo = i < 16 ? blk[h + 4 + i] & 0xF : blk[h + 4 + i - 16] >> 4;
                      w = lo + 16 * int((qh >> i) & 1) - (type == core::DType::kQ5_0 ? 16 : 0);
                    } else if (type == core::DType::kQ4_1) {
                      w = i < 16 ? blk[4 + i] & 0xF : blk[4 + i - 16] >> 4;
                    } else {
                      const int q = i < 16 ? blk[2 + i] & 0xF : blk[2 + i - 16] >> 4;
                      w = type == core::DType::kQ4_0 ? q - 8 : kIq4Levels[q];
                    }
                    sum += w * xq[i];
                  }
                  acc = std::fma(float(sum), half_at(blk) * xd, acc);
                  if (type != core::DType::kQ4_1 && type != core::DType::kQ5_1) return acc;
                  // y = q * d + m: the min times the block's sum of activation quants.
                  int32_t xsum = 0;
                  for (int i = 0; i < 32; ++i) xsum += xq[i];
                  return std::fma(float(xsum), half_at(blk + 2) * xd, acc);
                });
}

}  // namespace anchorage::kernels

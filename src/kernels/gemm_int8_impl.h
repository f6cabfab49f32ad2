// The integer-dot GEMM (kernels/quant_dot.h) for AVX2 and AVX-512 VNNI, written once and
// compiled into gemm_int8_avx2.cc and gemm_int8_vnni.cc. Include it inside the ISA file's
// anonymous namespace, after <immintrin.h>, <cstdint>, kernels/gemm_job.h and:
//   constexpr int kInt8Mr;                 rows of one register tile
//   constexpr bool kFlipQ8;                store Q8_0 quants as w ^ 0x80 (unsigned, for vpdpbusd)
//   Q8Tile pick_q8_0(int rows);            the Q8_0 tile of `rows` <= kInt8Mr rows
//
// A block walks its panels one at a time and K in chunks: a chunk of a panel is first repacked
// into a small stack buffer (the weights of 4 consecutive inputs of a lane side by side, so
// one 32-bit lane holds the 4 bytes vpdpbusd / vpmaddubsw+vpmaddwd multiply with 4 activation
// bytes, and the f16 scales as f32), then every row tile of the block runs over the buffer (in
// L1). Each tile computes, per output, the integer block sums exactly and combines them into
// the float accumulator in block order with the ops scalar spells out (gemm_scalar.cc
// int8_q8_0): the partial sums pass through y between chunks (an f32 store/load is exact). So
// rows, tiles, chunks and threads change nothing in a result, and every ISA gives the scalar
// bits.
// (No #includes here: the file is included inside a namespace.)
#pragma once

using Q8Tile = void (*)(const uint8_t* wt, const float* dw, int nb, const uint8_t* xrow,
                        int64_t ldq, int64_t xd_off, int64_t xs_off, int64_t kb0, float* y,
                        int64_t ldy, bool first, int64_t n_cols);
Q8Tile pick_q8_0(int rows);  // defined by the ISA file

// Q8_0 blocks per repacked chunk: 8 KiB of quants + 1 KiB of scales, in L1 with the rows'
// activations.
constexpr int kQ8Chunk = 8;

// 4 byte rows of 32 lanes (inputs k .. k+3 of a byte-interleaved panel) -> 128 bytes, lane l's
// 4 bytes (k, k+1, k+2, k+3) at 4l: bytes paired, then pairs paired, within 128-bit halves,
// then the halves put back in lane order.
ANCHORAGE_FORCE_INLINE void transpose4x32(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2,
                                          const uint8_t* r3, __m256i flip, uint8_t* out) {
  const __m256i a0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*)r0), flip);
  const __m256i a1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*)r1), flip);
  const __m256i a2 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*)r2), flip);
  const __m256i a3 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*)r3), flip);
  const __m256i t0 = _mm256_unpacklo_epi8(a0, a1);  // lanes 0-7 | 16-23, (k, k+1)
  const __m256i t1 = _mm256_unpackhi_epi8(a0, a1);  // lanes 8-15 | 24-31
  const __m256i t2 = _mm256_unpacklo_epi8(a2, a3);
  const __m256i t3 = _mm256_unpackhi_epi8(a2, a3);
  const __m256i u0 = _mm256_unpacklo_epi16(t0, t2);  // lanes 0-3 | 16-19, (k .. k+3)
  const __m256i u1 = _mm256_unpackhi_epi16(t0, t2);  // lanes 4-7 | 20-23
  const __m256i u2 = _mm256_unpacklo_epi16(t1, t3);  // lanes 8-11 | 24-27
  const __m256i u3 = _mm256_unpackhi_epi16(t1, t3);  // lanes 12-15 | 28-31
  _mm256_store_si256((__m256i*)out, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_store_si256((__m256i*)(out + 32), _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_store_si256((__m256i*)(out + 64), _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_store_si256((__m256i*)(out + 96), _mm256_permute2x128_si256(u2, u3, 0x31));
}

// The 32 lanes' f16 at byte rows lo and lo + 32 of a byte-interleaved block, as f32 (exact;
// vcvtph2ps quiets a signalling NaN, which the multiply it then enters would do anyway).
ANCHORAGE_FORCE_INLINE void scales_f16(const uint8_t* lo, float* out) {
  const __m256i a = _mm256_loadu_si256((const __m256i*)lo);
  const __m256i b = _mm256_loadu_si256((const __m256i*)(lo + 32));
  const __m256i l = _mm256_unpacklo_epi8(a, b);  // lanes 0-7 | 16-23
  const __m256i u = _mm256_unpackhi_epi8(a, b);  // lanes 8-15 | 24-31
  const __m256i h0 = _mm256_permute2x128_si256(l, u, 0x20);
  const __m256i h1 = _mm256_permute2x128_si256(l, u, 0x31);
  _mm256_store_ps(out, _mm256_cvtph_ps(_mm256_castsi256_si128(h0)));
  _mm256_store_ps(out + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(h0, 1)));
  _mm256_store_ps(out + 16, _mm256_cvtph_ps(_mm256_castsi256_si128(h1)));
  _mm256_store_ps(out + 24, _mm256_cvtph_ps(_mm256_extracti128_si256(h1, 1)));
}

// nb Q8_0 k blocks of a panel (34 byte rows of 32 lanes each) -> wt [nb][8][128] (groups of 4
// inputs, transposed) and dw [nb][32].
inline void repack_q8_0(const uint8_t* blocks, int nb, uint8_t* wt, float* dw) {
  const __m256i flip = _mm256_set1_epi8(kFlipQ8 ? char(0x80) : 0);
  for (int b = 0; b < nb; ++b) {
    const uint8_t* blk = blocks + b * 32 * 34;
    scales_f16(blk, dw + b * 32);
    for (int g = 0; g < 8; ++g) {
      const uint8_t* q = blk + (2 + 4 * g) * 32;
      transpose4x32(q, q + 32, q + 64, q + 96, flip, wt + b * 1024 + g * 128);
    }
  }
}

inline void int8_q8_0_block(const GemmJob& job, const GemmBlock& b) {
  alignas(64) uint8_t wt[kQ8Chunk * 1024];
  alignas(64) float dw[kQ8Chunk * 32];
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 32, pstride = nbt * 32 * 34;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t kb0 = 0; kb0 < nbt; kb0 += kQ8Chunk) {
      const int nb = int(nbt - kb0 < kQ8Chunk ? nbt - kb0 : kQ8Chunk);
      repack_q8_0(panels + p * pstride + kb0 * 32 * 34, nb, wt, dw);
      for (int64_t m = b.m0; m < b.m1; m += kInt8Mr) {
        const int r = int(b.m1 - m < kInt8Mr ? b.m1 - m : kInt8Mr);
        pick_q8_0(r)(wt, dw, nb, job.xq + m * job.ldq, job.ldq, job.xd_off, job.xs_off, kb0,
                     job.y + m * job.ldy + p * 32, job.ldy, kb0 == 0, job.N - p * 32);
      }
    }
  }
}

inline void gemm_int8_block_impl(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return int8_q8_0_block(job, b);
    default:
      break;
  }
}

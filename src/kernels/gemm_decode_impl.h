// The in-register decode kernels (blocks of at most 8 rows: decode and verify) for f16, Q8_0,
// Q4_K and Q6_K panels, written once and compiled into gemm_avx512.cc and gemm_avx2.cc like
// gemm_block_impl.h. The panels are read in place: each weight is dequantized in registers
// straight into the FMA chain, with no unpack buffer.
//
// Include it inside the ISA file's anonymous namespace, after <immintrin.h>, <cstdint>,
// kernels/gemm_job.h and a struct DV of vector operations (kW f32 lanes, F and I vector types;
// see gemm_avx512.cc) and kDecodeMr (rows of one decode register tile). The 256-bit integer
// steps shared by both ISAs (gathering f16 scales, assembling Q6_K quants) are written here
// with AVX2 intrinsics, which both files are built with.
//
// Why the bits equal the unpacking path's (and so the reference's, M's and every ISA's):
//   - each weight is computed with the IEEE operations of kernels/quant.cc's dequantizers on
//     the same operands: f16 and f16 scales by vcvtph2ps (exact; it quiets a signalling NaN,
//     but every such value is then an operand of a multiply or of the accumulating FMA, which
//     quiets it anyway, with the same payload), Q8_0 float(q) * d, Q6_K (d * float(sc)) *
//     float(q - 32), Q4_K (d * float(sc)) * float(q) - dmin * float(m);
//   - Q4_K's product (d * sc) * q is exact whenever d is finite (an 11-bit f16 significand
//     times a 6-bit scale times a 4-bit quant fits 24 bits, and f32's range holds every f16
//     times 63 * 15), so the product-then-difference equals one fmsub (a single rounding) on
//     finite scales. A k block of a panel with an inf or NaN d or dmin in any lane takes the
//     product-then-difference instead (fmsub would pick another NaN for inf * 0 - NaN);
//   - every output element is one FMA chain over k ascending from +0.0f, as in every other
//     path (gemm.h). Rows, panels and tiles only decide which chains share a dequantized
//     vector, never a chain's operands or order.
// (No #includes here: the file is included inside a namespace.)
#pragma once

constexpr int kNv = 32 / DV::kW;  // vectors per 32-lane panel

using DecodeFn = void (*)(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K,
                          float* y, int64_t ldy, int64_t n_cols);

// The 32 lanes' f16 at byte rows `lo` and `lo + 32` of a byte-interleaved k block, as two
// vectors of 16 halves (lanes 0-15, 16-31): the bytes interleaved within 128-bit halves, then
// the halves put back in lane order.
inline void gather_halves(const uint8_t* lo, __m256i h[2]) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + 32));
  const __m256i l = _mm256_unpacklo_epi8(a, b);  // lanes 0-7 | 16-23
  const __m256i u = _mm256_unpackhi_epi8(a, b);  // lanes 8-15 | 24-31
  h[0] = _mm256_permute2x128_si256(l, u, 0x20);
  h[1] = _mm256_permute2x128_si256(l, u, 0x31);
}

// True if any of the 32 halves is inf or NaN (exponent all ones).
inline bool any_nonfinite(const __m256i h[2]) {
  const __m256i e = _mm256_set1_epi16(0x7c00);
  const __m256i a = _mm256_cmpeq_epi16(_mm256_and_si256(h[0], e), e);
  const __m256i b = _mm256_cmpeq_epi16(_mm256_and_si256(h[1], e), e);
  return _mm256_movemask_epi8(_mm256_or_si256(a, b)) != 0;
}

template <int R, int P>
struct Acc {
  DV::F v[R][P][kNv];
  void zero() {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
        for (int j = 0; j < kNv; ++j) v[r][q][j] = DV::zero();
  }
  void store(float* y, int64_t ldy, int64_t n_cols) const {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
        for (int j = 0; j < kNv; ++j) {
          const int64_t c = 32 * q + DV::kW * j;
          DV::store(y + r * ldy + c, v[r][q][j], n_cols - c);
        }
  }
  // acc[r][q][j] = fma(x[r], w, acc[r][q][j]) for every row: one k step of panel q's vector j.
  ANCHORAGE_FORCE_INLINE void step(const DV::F (&xb)[R], int q, int j, DV::F w) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) v[r][q][j] = DV::fma(xb[r], w, v[r][q][j]);
  }
};

template <int R>
ANCHORAGE_FORCE_INLINE void broadcast_x(const float* x, int64_t ldx, int64_t k, DV::F (&xb)[R]) {
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) xb[r] = DV::bcast(x + r * ldx + k);
}

// f16: panel p is [K][32] halves; one vcvtph2ps per kW weights.
template <int R, int P>
void f16_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
              int64_t ldy, int64_t n_cols) {
  Acc<R, P> acc;
  acc.zero();
  for (int64_t k = 0; k < K; ++k) {
    DV::F xb[R];
    broadcast_x<R>(x, ldx, k, xb);
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
      for (int j = 0; j < kNv; ++j)
        acc.step(xb, q, j, DV::f16(w + q * pstride + k * 64 + j * DV::kW * 2));
  }
  acc.store(y, ldy, n_cols);
}

// Q8_0: k block kb of a panel = 34 byte rows of 32 lanes (d, then 32 quants).
template <int R, int P>
void q8_0_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
               int64_t ldy, int64_t n_cols) {
  Acc<R, P> acc;
  acc.zero();
  for (int64_t kb = 0; kb < K / 32; ++kb) {
    DV::F d[P][kNv];
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      __m256i h[2];
      gather_halves(w + q * pstride + kb * 32 * 34, h);
#pragma GCC unroll 8
      for (int j = 0; j < kNv; ++j) d[q][j] = DV::halves(h, j);
    }
    // Input 4g + t: byte t of quad g's 32-bit lanes (kernels/panel_layout.h).
    for (int g = 0; g < 8; ++g) {
#pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) {
        DV::F xb[R];
        broadcast_x<R>(x, ldx, kb * 32 + 4 * g + t, xb);
#pragma GCC unroll 16
        for (int q = 0; q < P; ++q) {
          const uint8_t* qs = w + q * pstride + kb * 32 * 34 + (2 + 4 * g) * 32;
#pragma GCC unroll 8
          for (int j = 0; j < kNv; ++j)
            acc.step(xb, q, j,
                     DV::mul(DV::cvt(DV::byte_i8(DV::u32(qs + j * DV::kW * 4), t)), d[q][j]));
        }
      }
    }
  }
  acc.store(y, ldy, n_cols);
}

// Q4_K: one sub-block (32 inputs) of a k block, A = d * sc and B = dmin * m per lane. kFused:
// the scales are finite, so (A * q) - B (A * q exact) is one fmsub. The quant bytes are in quads
// (kernels/panel_layout.h): input 4g + t of lane l is byte t of the 32-bit lane l of quad g.
template <bool kFused, bool kHigh, int R, int P>
ANCHORAGE_FORCE_INLINE void q4_k_sub(const float* x, int64_t ldx, int64_t k0, const uint8_t* qs,
                                     int64_t pstride, const DV::F (&A)[P][kNv],
                                     const DV::F (&B)[P][kNv], Acc<R, P>& acc) {
  for (int g = 0; g < 8; ++g) {
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) {
      DV::F xb[R];
      broadcast_x<R>(x, ldx, k0 + 4 * g + t, xb);
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q) {
#pragma GCC unroll 8
        for (int j = 0; j < kNv; ++j) {
          const DV::I b = DV::u32(qs + q * pstride + g * 128 + j * DV::kW * 4);
          const DV::F qf = DV::cvt(DV::and15(DV::srl(b, 8 * t + (kHigh ? 4 : 0))));
          const DV::F wv =
              kFused ? DV::fmsub(A[q][j], qf, B[q][j]) : DV::sub(DV::mul(A[q][j], qf), B[q][j]);
          acc.step(xb, q, j, wv);
        }
      }
    }
  }
}

// Q4_K: k block kb of a panel = 144 byte rows (d, dmin, 12 scale bytes, 128 quant bytes in quads).
template <int R, int P>
void q4_k_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
               int64_t ldy, int64_t n_cols) {
  Acc<R, P> acc;
  acc.zero();
  for (int64_t kb = 0; kb < K / 256; ++kb) {
    const uint8_t* blk = w + kb * 32 * 144;
    // Per panel and lane the 8 sub-blocks' A = d * float(sc), B = dmin * float(m), computed as
    // kernels/quant.cc's q4k_scale_min does, on 32-bit lanes.
    DV::F A[8][P][kNv], B[8][P][kNv];
    bool finite = true;
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      const uint8_t* bq = blk + q * pstride;
      __m256i hd[2], hm[2];
      gather_halves(bq, hd);
      gather_halves(bq + 64, hm);
      finite = finite && !any_nonfinite(hd) && !any_nonfinite(hm);
#pragma GCC unroll 8
      for (int j = 0; j < kNv; ++j) {
        const DV::F d = DV::halves(hd, j), dmin = DV::halves(hm, j);
        DV::I s[12];
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) s[i] = DV::u8(bq + (4 + i) * 32 + j * DV::kW);
#pragma GCC unroll 8
        for (int sb = 0; sb < 8; ++sb) {
          DV::I sc, m;
          if (sb < 4) {
            sc = DV::and_(s[sb], 63);
            m = DV::and_(s[sb + 4], 63);
          } else {
            sc = DV::or_(DV::and15(s[sb + 4]), DV::sll4(DV::srl6(s[sb - 4])));
            m = DV::or_(DV::srl4(s[sb + 4]), DV::sll4(DV::srl6(s[sb])));
          }
          A[sb][q][j] = DV::mul(d, DV::cvt(sc));
          B[sb][q][j] = DV::mul(dmin, DV::cvt(m));
        }
      }
    }
    // Sub-blocks 2i and 2i + 1: the low and the high nibbles of quant rows 16 + 32i.. 16 + 32i
    // + 31.
    for (int i = 0; i < 4; ++i) {
      const uint8_t* qs = blk + (16 + 32 * i) * 32;
      const int64_t k0 = kb * 256 + 64 * i;
      if (finite) {
        q4_k_sub<true, false>(x, ldx, k0, qs, pstride, A[2 * i], B[2 * i], acc);
        q4_k_sub<true, true>(x, ldx, k0 + 32, qs, pstride, A[2 * i + 1], B[2 * i + 1], acc);
      } else {
        q4_k_sub<false, false>(x, ldx, k0, qs, pstride, A[2 * i], B[2 * i], acc);
        q4_k_sub<false, true>(x, ldx, k0 + 32, qs, pstride, A[2 * i + 1], B[2 * i + 1], acc);
      }
    }
  }
  acc.store(y, ldy, n_cols);
}

// Q6_K: k block kb of a panel = 210 byte rows (128 of low nibbles ql, 64 of high pairs qh, 16
// int8 scales, d; each where q6_k_row puts it). Input 128h + 32t + e (h < 2, t < 4, e < 32) is ql
// row 64h + 32(t % 2) + e (low nibble for t < 2, high for t >= 2) with bits 2t, 2t+1 of qh row 128
// + 32h + e above it, minus 32, times d * sc[8h + 2t + e / 16].
template <int R, int P>
void q6_k_tile(const float* x, int64_t ldx, const uint8_t* w, int64_t pstride, int64_t K, float* y,
               int64_t ldy, int64_t n_cols) {
  Acc<R, P> acc;
  acc.zero();
  static const float k32 = 32.0f;
  const DV::F c32 = DV::bcast(&k32);
  for (int64_t kb = 0; kb < K / 256; ++kb) {
    const uint8_t* blk = w + kb * 32 * 210;
    DV::F ds[16][P][kNv];
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      __m256i hd[2];
      gather_halves(blk + q * pstride + q6_k_row(208) * 32, hd);
#pragma GCC unroll 8
      for (int j = 0; j < kNv; ++j) {
        const DV::F d = DV::halves(hd, j);
        for (int i = 0; i < 16; ++i)
          ds[i][q][j] =
              DV::mul(d, DV::cvt(DV::i8(blk + q * pstride + q6_k_row(192 + i) * 32 + j * DV::kW)));
      }
    }
    for (int c = 0; c < 8; ++c) {
      const int h = c / 4, t = c % 4;
      const int ql = 64 * h + 32 * (t % 2), qh = 128 + 32 * h;  // their first rows
      // Input e = 4g + i: byte i of quad g's 32-bit lanes (kernels/panel_layout.h); its code's
      // low 4 bits are that ql byte's nibble, bits 4-5 bits 2t, 2t + 1 of the qh byte.
      for (int g = 0; g < 8; ++g) {
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const int e = 4 * g + i;
          DV::F xb[R];
          broadcast_x<R>(x, ldx, kb * 256 + 128 * h + 32 * t + e, xb);
          const int is = 8 * h + 2 * t + e / 16;
#pragma GCC unroll 16
          for (int q = 0; q < P; ++q) {
#pragma GCC unroll 8
            for (int j = 0; j < kNv; ++j) {
              const DV::I l =
                  DV::u32(blk + q * pstride + q6_k_row(ql + 4 * g) * 32 + j * DV::kW * 4);
              const DV::I u =
                  DV::u32(blk + q * pstride + q6_k_row(qh + 4 * g) * 32 + j * DV::kW * 4);
              const DV::I lo = DV::and15(DV::srl(l, 8 * i + (t >= 2 ? 4 : 0)));
              const DV::I hi = DV::and_(DV::srl(u, 8 * i + 2 * t), 3);
              // float(q) - 32 is float(q - 32) exactly (|q| < 64).
              const DV::F qf = DV::sub(DV::cvt(DV::or_(lo, DV::sll4(hi))), c32);
              acc.step(xb, q, j, DV::mul(ds[is][q][j], qf));
            }
          }
        }
      }
    }
  }
  acc.store(y, ldy, n_cols);
}

template <int T, int R, int P>
DecodeFn decode_tile() {
  if constexpr (T == int(core::DType::kF16)) return &f16_tile<R, P>;
  if constexpr (T == int(core::DType::kQ8_0)) return &q8_0_tile<R, P>;
  if constexpr (T == int(core::DType::kQ4_K)) return &q4_k_tile<R, P>;
  return &q6_k_tile<R, P>;
}

// The tile of R rows x exactly p panels (p a power of two up to decode_panels(T, R)).
template <int T, int R, int P = decode_panels(T, R)>
DecodeFn decode_pick_p(int p) {
  if constexpr (P == 1) {
    return decode_tile<T, R, 1>();
  } else {
    return p == P ? decode_tile<T, R, P>() : decode_pick_p<T, R, P / 2>(p);
  }
}

template <int T>
DecodeFn decode_pick(int r, int p) {
  static_assert(kDecodeMr <= 8);
  // clang-format off
  switch (r) {
    case 1: return decode_pick_p<T, 1>(p);
    case 2: if constexpr (kDecodeMr >= 2) return decode_pick_p<T, 2>(p); break;
    case 3: if constexpr (kDecodeMr >= 3) return decode_pick_p<T, 3>(p); break;
    case 4: if constexpr (kDecodeMr >= 4) return decode_pick_p<T, 4>(p); break;
    case 5: if constexpr (kDecodeMr >= 5) return decode_pick_p<T, 5>(p); break;
    case 6: if constexpr (kDecodeMr >= 6) return decode_pick_p<T, 6>(p); break;
    case 7: if constexpr (kDecodeMr >= 7) return decode_pick_p<T, 7>(p); break;
    default: break;
  }
  // clang-format on
  return decode_pick_p<T, kDecodeMr>(p);
}

// Bytes of one panel of K inputs.
inline int64_t decode_panel_bytes(int dtype, int64_t K) {
  switch (core::DType(dtype)) {
    case core::DType::kF16:
      return K * 64;
    case core::DType::kQ8_0:
      return K / 32 * 32 * 34;
    case core::DType::kQ4_K:
      return K / 256 * 32 * 144;
    default:
      return K / 256 * 32 * 210;
  }
}

template <int T>
void decode_block_t(const GemmJob& job, const GemmBlock& b) {
  const int64_t rows = b.m1 - b.m0;
  const int pg = decode_panels(T, int(rows < kDecodeMr ? rows : kDecodeMr));
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t pstride = decode_panel_bytes(T, job.K);
  for (int64_t p = b.p0; p < b.p1;) {
    int np = pg;
    while (np > b.p1 - p) np /= 2;
    // Row tiles inside the panel group: the group's weights are re-read from L1/L2, not memory.
    for (int64_t m = b.m0; m < b.m1; m += kDecodeMr) {
      const int r = int(b.m1 - m < kDecodeMr ? b.m1 - m : kDecodeMr);
      decode_pick<T>(r, np)(job.x + m * job.ldx, job.ldx, panels + p * pstride, pstride, job.K,
                            job.y + m * job.ldy + p * 32, job.ldy, job.N - p * 32);
    }
    p += np;
  }
}

inline void gemm_decode_block_impl(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kF16:
      return decode_block_t<int(core::DType::kF16)>(job, b);
    case core::DType::kQ8_0:
      return decode_block_t<int(core::DType::kQ8_0)>(job, b);
    case core::DType::kQ4_K:
      return decode_block_t<int(core::DType::kQ4_K)>(job, b);
    case core::DType::kQ6_K:
      return decode_block_t<int(core::DType::kQ6_K)>(job, b);
    default:
      break;
  }
}

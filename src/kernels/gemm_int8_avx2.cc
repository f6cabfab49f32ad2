// The integer-dot GEMM (kernels/quant_dot.h) for AVX2: vpmaddubsw multiplies unsigned by signed
// bytes and adds adjacent pairs to 16 bits, vpmaddwd by ones adds those pairs to 32 bits: the
// sum of 4 products per 32-bit lane, as vpdpbusd. Q8_0 quants are signed, so the unsigned
// operand is |w| and the activation takes w's sign (vpsignb); a pair sums at most
// 2 * 128 * 127 = 32,512 < 2^15, so nothing saturates and the block sum is exact: the same
// integer as every other ISA's, and the float steps are gemm_scalar.cc's. Also the path of an
// AVX-512 CPU without VNNI. Anonymous namespace, no std:: templates (see gemm_job.h).
#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/gemm_job.h"
#include "kernels/q3_k_codes.h"
#include "kernels/simd/force_inline.h"

namespace anchorage::kernels::isa_avx2 {
namespace {

inline __m256i lane_mask8(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n < 0 ? 0 : n > 8 ? 8 : n)), idx);
}

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

// Each 32-bit lane's low 16 bits (a small signed or unsigned int32) in both of its halves: the
// int16 pair (x, x), so one vpmaddwd multiplies both 16-bit sums of the lane by x.
inline __m256i low16_in_both_halves(__m256i x) {
  const __m256i ctl = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0,
                                       1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
  return _mm256_shuffle_epi8(x, ctl);
}

// S[r] += the pair sums of row r's activations (4 bytes a group at x + r * ldq + 4g) times
// kGroups repacked groups of unsigned codes (q[g], lanes 8c .. 8c + 7), added in 16 bits (the
// caller keeps them below 2^15), then widened and scaled by one vpmaddwd with sc16 (the scale as
// the int16 pair (s, s) of each lane).
template <int R, int kGroups>
ANCHORAGE_FORCE_INLINE void add_scaled_groups(const uint8_t (*q)[128], int c, const uint8_t* x,
                                              int64_t ldq, __m256i sc16, __m256i* S) {
  __m256i is[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) is[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) {
    const __m256i qg = _mm256_load_si256((const __m256i*)(q[g] + 32 * c));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      is[r] = _mm256_add_epi16(
          is[r], _mm256_maddubs_epi16(qg, _mm256_set1_epi32(load_i32(x + r * ldq + 4 * g))));
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) S[r] = _mm256_add_epi32(S[r], _mm256_madd_epi16(is[r], sc16));
}

// Rows of a tile: R float accumulators + R block sums + weights, |w|, broadcast, product, ones.
constexpr int kInt8Mr = 4;
constexpr bool kFlipQ8 = false;

// R rows x one panel over nb Q8_0 blocks of a repacked chunk, one group of 8 lanes (a ymm)
// after another: only R accumulators and R block sums are live, so R rows share each weight
// load and |w|. kBits 4 or 5 (Q4_0, Q4_1, Q5_0, Q5_1): the repack holds the unsigned codes q,
// multiplied as they are, the pair sums of 8 groups (4-bit: 8 * 2 * 15 * 128 = 30,720) or 4
// (5-bit: 31,744) added in 16 bits before one vpmaddwd by ones widens them, and kOffset x the
// activations' block sum taken off: sum((q - kOffset) a), the integer the signed codes give.
template <int R, int kBits = 8, int kOffset = 0>
void q8_0_tile(const uint8_t* wt, const float* dw, const float* mw, int nb, const uint8_t* xrow,
               int64_t ldq, int64_t xd_off, int64_t xs_off, int64_t kb0, float* y, int64_t ldy,
               bool first, int64_t n_cols) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int j = 0; j < 4 && 8 * j < n_cols; ++j) {
    const __m256i mask = lane_mask8(n_cols - 8 * j);
    __m256 acc[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + r * ldy + 8 * j, mask);
    for (int b = 0; b < nb; ++b) {
      const int64_t kb = kb0 + b;
      __m256i ia[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) ia[r] = _mm256_setzero_si256();
      if constexpr (kBits == 8) {
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {
          const __m256i w = _mm256_load_si256((const __m256i*)(wt + b * 1024 + g * 128 + 32 * j));
          const __m256i u = _mm256_abs_epi8(w);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const __m256i a = _mm256_set1_epi32(load_i32(xrow + r * ldq + kb * 32 + 4 * g));
            const __m256i p = _mm256_maddubs_epi16(u, _mm256_sign_epi8(a, w));
            ia[r] = _mm256_add_epi32(ia[r], _mm256_madd_epi16(p, ones));
          }
        }
      } else {
        constexpr int kFlush = kBits == 4 ? 8 : 4;
        const auto* q = reinterpret_cast<const uint8_t(*)[128]>(wt + b * 1024);
#pragma GCC unroll 2
        for (int g0 = 0; g0 < 8; g0 += kFlush)
          add_scaled_groups<R, kFlush>(q + g0, j, xrow + kb * 32 + 4 * g0, ldq, ones, ia);
        if constexpr (kOffset != 0) {
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r)
            ia[r] = _mm256_sub_epi32(
                ia[r], _mm256_set1_epi32(kOffset * load_i32(xrow + r * ldq + xs_off + 4 * kb)));
        }
      }
      const __m256 d = _mm256_load_ps(dw + b * 32 + 8 * j);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        float dxv;
        __builtin_memcpy(&dxv, xrow + r * ldq + xd_off + 4 * kb, 4);
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia[r]), _mm256_mul_ps(d, _mm256_set1_ps(dxv)),
                                 acc[r]);
        if (mw) {  // Q4_1 / Q5_1: the min times the activations' block sum
          const float s = float(load_i32(xrow + r * ldq + xs_off + 4 * kb));
          acc[r] = _mm256_fmadd_ps(
              _mm256_set1_ps(s),
              _mm256_mul_ps(_mm256_load_ps(mw + b * 32 + 8 * j), _mm256_set1_ps(dxv)), acc[r]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) _mm256_maskstore_ps(y + r * ldy + 8 * j, mask, acc[r]);
  }
}

#include "kernels/gemm_int8_impl.h"

// R rows x one repacked Q4_K or Q5_K k block, 8 lanes at a time: per sub-block the exact sum of
// q x a times sc (q <= 31, so a vpmaddubsw pair sums at most 2 * 31 * 128 and 4 groups' pairs
// add in 16 bits, 31,744, before one vpmaddwd by the scale widens and scales them), and the
// mins' sum; then gemm_scalar.cc's two float steps (the integers are those of per-sub-block
// sums times sc in int32, so the bits are too).
// IQ4_XS (kXs: signed levels, sc = ls - 32, no mins): |level| x (a with level's sign), a pair at
// most 2 * 127 * 127 < 2^15, and the one float step.
template <int R, bool kXs>
void q4_k_tile(const Q4KRepacked& w, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, int64_t kb, float* y, int64_t ldy, bool first, int64_t n_cols) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    __m256i S[R], Mn[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r] = Mn[r] = _mm256_setzero_si256();
    for (int j = 0; j < 8; ++j) {
      const __m256i sc = _mm256_load_si256((const __m256i*)(w.sc[j] + 8 * c));
      if constexpr (kXs) {
        __m256i is[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) is[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {
          const __m256i q = _mm256_load_si256((const __m256i*)(w.q[j][g] + 32 * c));
          const __m256i u = _mm256_abs_epi8(q);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const __m256i a = _mm256_sign_epi8(
                _mm256_set1_epi32(load_i32(xrow + r * ldq + kb * 256 + 32 * j + 4 * g)), q);
            is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), ones));
          }
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) S[r] = _mm256_add_epi32(S[r], _mm256_mullo_epi32(is[r], sc));
        continue;
      }
      // Unsigned codes: 4 groups' pair sums add in 16 bits (Q5_K: 4 * 2 * 31 * 127 = 31,496),
      // then one vpmaddwd by the scale (0..63) duplicated into both halves of its lane.
      const __m256i sc16 = low16_in_both_halves(sc);
      add_scaled_groups<R, 4>(w.q[j], c, xrow + kb * 256 + 32 * j, ldq, sc16, S);
      add_scaled_groups<R, 4>(w.q[j] + 4, c, xrow + kb * 256 + 32 * j + 16, ldq, sc16, S);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int32_t* s16 = reinterpret_cast<const int32_t*>(xrow + r * ldq + xs_off) + kb * 16;
        const __m256i mn = _mm256_load_si256((const __m256i*)(w.mn[j] + 8 * c));
        Mn[r] = _mm256_add_epi32(
            Mn[r], _mm256_mullo_epi32(mn, _mm256_set1_epi32(s16[2 * j] + s16[2 * j + 1])));
      }
    }
    const __m256 d = _mm256_load_ps(w.d + 8 * c), dmin = _mm256_load_ps(w.dmin + 8 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float dxv;
      __builtin_memcpy(&dxv, xrow + r * ldq + xd_off + 4 * kb, 4);
      const __m256 dx = _mm256_set1_ps(dxv);
      __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + r * ldy + 8 * c, mask);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[r]), _mm256_mul_ps(d, dx), acc);
      if (!kXs) acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(Mn[r]), _mm256_mul_ps(dmin, dx), acc);
      _mm256_maskstore_ps(y + r * ldy + 8 * c, mask, acc);
    }
  }
}

// R rows x one repacked Q6_K k block, 8 lanes at a time: per sub-block of 16 the exact sum of
// q x a (q <= 63: a pair sums at most 2 * 63 * 128, no saturation; kGroups16 groups' pairs add
// in 16 bits before one vpmaddwd by the scale, duplicated into both halves of its lane, widens
// and scales them) minus 32 x the activations' sum times sc; then gemm_scalar.cc's float step.
// Q3_K (q <= 7) the same with 4 x the sum; Q2_K (q <= 3) without, plus Q4_K's mins and second
// float step. The integers are those of per-sub-block sums times sc in int32, so the bits are too.
template <int R, int kType>
void q6_k_tile(const Q6KRepacked& w, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, int64_t kb, float* y, int64_t ldy, bool first, int64_t n_cols) {
  for (int c = 0; c < 4 && 8 * c < n_cols; ++c) {
    const __m256i mask = lane_mask8(n_cols - 8 * c);
    constexpr bool kMins = kType == int(core::DType::kQ2_K);
    constexpr int kOff = kType == int(core::DType::kQ6_K) ? 32 : kMins ? 0 : 4;
    // Groups whose pair sums add in 16 bits: Q6_K's codes <= 63, 2 * 2 * 63 * 128 = 32,256;
    // Q3_K's <= 7 and Q2_K's <= 3 all 4 of a sub-block.
    constexpr int kGroups16 = kType == int(core::DType::kQ6_K) ? 2 : 4;
    __m256i S[R], Mn[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) S[r] = Mn[r] = _mm256_setzero_si256();
    for (int j = 0; j < 16; ++j) {
      const __m256i sc = _mm256_load_si256((const __m256i*)(w.sc[j] + 8 * c));
      const __m256i sc16 = low16_in_both_halves(sc);
#pragma GCC unroll 2
      for (int g0 = 0; g0 < 4; g0 += kGroups16)
        add_scaled_groups<R, kGroups16>(w.q[j] + g0, c, xrow + kb * 256 + 16 * j + 4 * g0, ldq,
                                        sc16, S);
    }
    // The offsets (kOff sum_j sc_j s_j) and Q2_K's mins (sum_j m_j s_j), two sub-blocks at a
    // time: vpmaddwd of each lane's int16 pair (sc_j, sc_j+1) by the row's (s_j, s_j+1) (|s| <=
    // 16 * 128, int16), outside the multiplies' loop (a vpmulld per sub-block and row there).
    if constexpr (kOff != 0 || kMins) {
      __m256i O[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) O[r] = _mm256_setzero_si256();
      for (int j = 0; j < 16; j += 2) {
        const uint8_t(*v)[32 * 4] = kMins ? reinterpret_cast<const uint8_t(*)[128]>(w.mn)
                                          : reinterpret_cast<const uint8_t(*)[128]>(w.sc);
        const __m256i p = _mm256_blend_epi16(
            _mm256_load_si256((const __m256i*)(v[j] + 32 * c)),
            _mm256_slli_epi32(_mm256_load_si256((const __m256i*)(v[j + 1] + 32 * c)), 16), 0xAA);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const int32_t* s = reinterpret_cast<const int32_t*>(xrow + r * ldq + xs_off) + kb * 16;
          const uint32_t pair = (uint32_t(s[j]) & 0xffffu) | (uint32_t(s[j + 1]) << 16);
          O[r] = _mm256_add_epi32(O[r], _mm256_madd_epi16(p, _mm256_set1_epi32(int32_t(pair))));
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        if (kMins) {
          Mn[r] = O[r];
        } else {
          S[r] = _mm256_sub_epi32(S[r], _mm256_mullo_epi32(O[r], _mm256_set1_epi32(kOff)));
        }
      }
    }
    const __m256 d = _mm256_load_ps(w.d + 8 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float dxv;
      __builtin_memcpy(&dxv, xrow + r * ldq + xd_off + 4 * kb, 4);
      __m256 acc = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + r * ldy + 8 * c, mask);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S[r]), _mm256_mul_ps(d, _mm256_set1_ps(dxv)), acc);
      if (kMins)
        acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(Mn[r]),
                               _mm256_mul_ps(_mm256_load_ps(w.dmin + 8 * c), _mm256_set1_ps(dxv)),
                               acc);
      _mm256_maskstore_ps(y + r * ldy + 8 * c, mask, acc);
    }
  }
}

template <int kType>
Q6KTile pick_k16(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q6_k_tile<1, kType>;
    case 2: return &q6_k_tile<2, kType>;
    case 3: return &q6_k_tile<3, kType>;
    default: return &q6_k_tile<4, kType>;
  }
  // clang-format on
}

Q6KTile pick_q6_k(int r) {
  return pick_k16<int(core::DType::kQ6_K)>(r);
}
Q6KTile pick_q3_k(int r) {
  return pick_k16<int(core::DType::kQ3_K)>(r);
}
Q6KTile pick_q2_k(int r) {
  return pick_k16<int(core::DType::kQ2_K)>(r);
}

Q4KTile pick_q4_k(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q4_k_tile<1, false>;
    case 2: return &q4_k_tile<2, false>;
    case 3: return &q4_k_tile<3, false>;
    default: return &q4_k_tile<4, false>;
  }
  // clang-format on
}

Q4KTile pick_iq4_xs(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q4_k_tile<1, true>;
    case 2: return &q4_k_tile<2, true>;
    case 3: return &q4_k_tile<3, true>;
    default: return &q4_k_tile<4, true>;
  }
  // clang-format on
}

template <int kBits, int kOffset>
Q8Tile pick_unsigned(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q8_0_tile<1, kBits, kOffset>;
    case 2: return &q8_0_tile<2, kBits, kOffset>;
    case 3: return &q8_0_tile<3, kBits, kOffset>;
    default: return &q8_0_tile<4, kBits, kOffset>;
  }
  // clang-format on
}

Q8Tile pick_q8_0(int r) {
  return pick_unsigned<8, 0>(r);
}

Q8Tile pick_q4_32_unsigned(int type, int r) {
  switch (core::DType(type)) {
    case core::DType::kQ4_0:
      return pick_unsigned<4, 8>(r);
    case core::DType::kQ4_1:
      return pick_unsigned<4, 0>(r);
    case core::DType::kQ5_0:
      return pick_unsigned<5, 16>(r);
    default:  // Q5_1
      return pick_unsigned<5, 0>(r);
  }
}

}  // namespace

void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  gemm_int8_block_impl(dtype, job, b);
}

}  // namespace anchorage::kernels::isa_avx2

// The integer-dot GEMM (kernels/quant_dot.h) for AVX-512 with VNNI and VBMI, reading the
// byte-interleaved panels in place (no repack, no buffer; AVX2 repacks, gemm_int8_impl.h):
//   - vpermt2b turns the 128 bytes of 4 consecutive inputs x 32 lanes (two zmm) into lanes
//     0-15 and 16-31 with each lane's 4 bytes side by side, in one instruction each;
//   - vpdpbusd multiplies 4 unsigned weight bytes by 4 signed activation bytes and adds the 4
//     products to a 32-bit lane, exactly. Q8_0 quants are signed, so they enter as
//     w ^ 0x80 = w + 128 and each block sum starts from -128 * (the activations' block sum):
//     the result is sum(w * a) exactly, the same integer as every other ISA's;
//   - the float steps are gemm_scalar.cc's (int8_q8_0), in the same order.
// Built with -mavx512vnni -mavx512vbmi (CMakeLists.txt: *_vnni.cc) and reached only when the
// CPU has both (core::cpu_has_avx512_vnni()); other AVX-512 CPUs run the AVX2 kernels, to the
// same bits. Anonymous namespace, no std:: templates (see gemm_job.h).
#include <immintrin.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/gemm_job.h"
#include "kernels/simd/force_inline.h"

namespace anchorage::kernels::isa_vnni {
namespace {

constexpr __mmask16 kAll = 0xffff;

inline __mmask16 lane_mask(int64_t n) {
  if (n >= 16) return kAll;
  if (n <= 0) return __mmask16(0);
  return __mmask16((1u << n) - 1u);
}

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

inline float load_f32(const uint8_t* p) {
  float v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

// vpermt2b indices over (rows k, k+1 | rows k+2, k+3): byte 4l + t of half h is input k + t of
// lane 16h + l, at byte 32t + 16h + l of the 128.
struct Perms {
  alignas(64) uint8_t t4[2][64];
  // vpermb indices over the two byte rows of 32 f16 scales (low bytes, then high bytes):
  // half l = bytes l and 32 + l.
  alignas(64) uint8_t halves[64];
  Perms() {
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 16; ++l)
        for (int t = 0; t < 4; ++t) t4[h][4 * l + t] = uint8_t(32 * t + 16 * h + l);
    for (int l = 0; l < 32; ++l) {
      halves[2 * l] = uint8_t(l);
      halves[2 * l + 1] = uint8_t(32 + l);
    }
  }
};
const Perms kPerms;

// The 32 lanes' f16 at byte rows 0 and 1 of p as f32, lanes 0-15 and 16-31 (exact; vcvtph2ps
// quiets a signalling NaN, which the multiply it then enters would do anyway).
ANCHORAGE_FORCE_INLINE void scales(const uint8_t* p, __m512i perm, __m512* d0, __m512* d1) {
  const __m512i h = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(p));
  *d0 = _mm512_maskz_cvtph_ps(kAll, _mm512_castsi512_si256(h));
  *d1 = _mm512_maskz_cvtph_ps(kAll, _mm512_extracti64x4_epi64(h, 1));
}

// Rows of a tile: 2R float accumulators + 2R block sums + 2 weight vectors + a broadcast +
// the 4 permutation / flip constants within 32 zmm.
constexpr int kMr = 4;

// R rows x one Q8_0 panel (34-byte-row k blocks of 32 lanes: d, then 32 quant rows) over all
// of K, from +0.0f.
template <int R>
void q8_0_tile(const uint8_t* panel, int64_t nbt, const uint8_t* xrow, int64_t ldq, int64_t xd_off,
               int64_t xs_off, float* y, int64_t ldy, int64_t n_cols) {
  const __m512i p0 = _mm512_load_si512(kPerms.t4[0]), p1 = _mm512_load_si512(kPerms.t4[1]);
  const __m512i ph = _mm512_load_si512(kPerms.halves);
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < nbt; ++kb) {
    const uint8_t* blk = panel + kb * 32 * 34;
    __m512i ia[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      ia[r][0] = ia[r][1] = _mm512_set1_epi32(-128 * load_i32(xrow + r * ldq + xs_off + 4 * kb));
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m512i z01 = _mm512_loadu_si512(blk + 64 + 128 * g);
      const __m512i z23 = _mm512_loadu_si512(blk + 128 + 128 * g);
      const __m512i w0 = _mm512_xor_si512(_mm512_permutex2var_epi8(z01, p0, z23), flip);
      const __m512i w1 = _mm512_xor_si512(_mm512_permutex2var_epi8(z01, p1, z23), flip);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512i a = _mm512_set1_epi32(load_i32(xrow + r * ldq + kb * 32 + 4 * g));
        ia[r][0] = _mm512_dpbusd_epi32(ia[r][0], w0, a);
        ia[r][1] = _mm512_dpbusd_epi32(ia[r][1], w1, a);
      }
    }
    __m512 d0, d1;
    scales(blk, ph, &d0, &d1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 dx = _mm512_set1_ps(load_f32(xrow + r * ldq + xd_off + 4 * kb));
      acc[r][0] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, ia[r][0]), _mm512_mul_ps(d0, dx),
                                  acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, ia[r][1]), _mm512_mul_ps(d1, dx),
                                  acc[r][1]);
    }
  }
  const __mmask16 m0 = lane_mask(n_cols), m1 = lane_mask(n_cols - 16);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, m0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, m1, acc[r][1]);
  }
}

using Q8Tile = void (*)(const uint8_t*, int64_t, const uint8_t*, int64_t, int64_t, int64_t, float*,
                        int64_t, int64_t);

Q8Tile pick_q8_0(int r) {
  // clang-format off
  switch (r) {
    case 1: return &q8_0_tile<1>;
    case 2: return &q8_0_tile<2>;
    case 3: return &q8_0_tile<3>;
    default: return &q8_0_tile<4>;
  }
  // clang-format on
}

// Panels outer, row tiles inner: a panel's k blocks are re-read from L1/L2 by each row tile.
void q8_0_block(const GemmJob& job, const GemmBlock& b) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nbt = job.K / 32, pstride = nbt * 32 * 34;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; m += kMr) {
      const int r = int(b.m1 - m < kMr ? b.m1 - m : kMr);
      pick_q8_0(r)(panels + p * pstride, nbt, job.xq + m * job.ldq, job.ldq, job.xd_off, job.xs_off,
                   job.y + m * job.ldy + p * 32, job.ldy, job.N - p * 32);
    }
  }
}

}  // namespace

void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return q8_0_block(job, b);
    default:
      break;
  }
}

}  // namespace anchorage::kernels::isa_vnni

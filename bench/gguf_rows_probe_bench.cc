// Issue 14 §2 probe: could decode read a GGUF tensor's Q4_K blocks where the file has them
// (row-major, 144 bytes a block) as fast as today's byte-interleaved panels (docs/kernels.md)?
// Start-up can only come within 1.5 x of one read of the file if the weights are not copied
// (docs/performance.md "Start-up"), and only decode needs a new kernel for that: a call of many
// rows could move a K block of 32 rows into panel order per call and run today's kernels.
//
// The probe's kernels (AVX-512 VNNI-era AVX-512BW, and AVX2) compute, per output row and 256-block
// in order, exactly today's integer-dot arithmetic (docs/kernels.md "Integer dot products":
// S = sum of sc_j * isum_j and Mn = sum of m_j * the activations' sums, exact int32, then
// acc = fma(float(S), d * a_d, acc), acc = fma(-float(Mn), dmin * a_d, acc)), so their outputs
// must equal gemm()'s bit for bit: checked with memcmp before anything is timed. A row's integer
// sums may be formed in any order (they are exact), which is what lets a row-major kernel keep
// the panels' bits.
//
// Prints one JSON document: for each thread count, the best of --repeats of gemm() on the
// panels, of each row kernel on the GGUF rows (`rows`: one row at a time; on AVX-512 also
// `rows4`, four rows side by side, and `blocks4`, four blocks of a row side by side; on both,
// `rows_table`, one row at a time reading each block's scales from a side table decoded ahead,
// as a load could write beside a mapped file), and of a plain read of the rows' bytes (the
// bound), each repeat alternating them.
// Figures: docs/performance.md "Start-up".
//
//     [ANCHORAGE_ISA=avx2] build/bench/gguf_rows_probe_bench [--n 131072] [--k 1024] [--repeats 15]
// GCC 12 reports its own AVX-512 intrinsics' undefined first operand as maybe uninitialized
// when they are built through a target attribute (not this file's values).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/packed_weight.h"
#include "kernels/quant.h"
#include "kernels/quant_dot.h"

namespace {

using anchorage::core::AlignedBuffer;
using anchorage::core::DType;
using anchorage::core::ThreadPool;
namespace kernels = anchorage::kernels;

constexpr int64_t kBlock = 256, kBlockBytes = 144, kRowsPerTask = 512;

// One activation row in the probe's form: the quants of each 256-block in the order the AVX-512
// kernel's nibble vectors meet them (a 64-byte load of the codes holds sub-blocks 2g and 2g + 2
// in its low nibbles, 2g + 1 and 2g + 3 in its high ones), each block's scale, and the sums of
// each sub-block of 32 (two of the format's sums of 16).
struct Act {
  std::vector<int8_t> natural, permuted;
  std::vector<float> d;
  std::vector<int16_t> sum32;  // |sum| <= 32 * 127: fits
};

Act prepare(const uint8_t* row, const kernels::ActFormat& f, int64_t K) {
  Act a;
  const auto* q = reinterpret_cast<const int8_t*>(row);
  const auto* d = reinterpret_cast<const float*>(row + f.d_offset);
  const auto* s = reinterpret_cast<const int32_t*>(row + f.s_offset);
  a.natural.assign(q, q + K);
  a.permuted.resize(size_t(K));
  for (int64_t b = 0; b < K / kBlock; ++b) {
    static constexpr int kOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};  // sub-block at each 32 bytes
    for (int i = 0; i < 8; ++i)
      std::memcpy(&a.permuted[size_t(b * kBlock + 32 * i)], q + b * kBlock + 32 * kOrder[i], 32);
    a.d.push_back(d[b]);
    for (int j = 0; j < 8; ++j)
      a.sum32.push_back(int16_t(s[b * 16 + 2 * j] + s[b * 16 + 2 * j + 1]));
  }
  return a;
}

// The 8 six-bit scales and the 8 mins of a block's 12 scale bytes (kernels/quant.cc's layout:
// sub-blocks 0-3 in the low 6 bits of bytes 0-3 and 4-7; 4-7 in the nibbles of bytes 8-11 with
// their top 2 bits in the top bits of bytes 0-3 and 4-7), as one byte each, four to a word.
struct ScalesMins {
  uint64_t scales, mins;
};
inline ScalesMins scales_mins(const uint8_t* s) {
  uint32_t w[3];
  std::memcpy(w, s, 12);
  constexpr uint32_t k6 = 0x3F3F3F3F, k4 = 0x0F0F0F0F, k2 = 0x03030303;
  const uint32_t sc_lo = w[0] & k6, m_lo = w[1] & k6;
  const uint32_t sc_hi = (w[2] & k4) | (((w[0] >> 6) & k2) << 4);
  const uint32_t m_hi = ((w[2] >> 4) & k4) | (((w[1] >> 6) & k2) << 4);
  return {uint64_t(sc_hi) << 32 | sc_lo, uint64_t(m_hi) << 32 | m_lo};
}

// The float steps of one block, as every ISA's kernel takes them (f16 scales widened exactly).
__attribute__((target("f16c,fma"), always_inline)) inline float block_step(float acc, int32_t S,
                                                                           int32_t Mn,
                                                                           const uint8_t* blk,
                                                                           float ad) {
  uint32_t h;
  std::memcpy(&h, blk, 4);
  const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(int(h)));  // d, dmin
  const float d = _mm_cvtss_f32(dd), dmin = _mm_cvtss_f32(_mm_shuffle_ps(dd, dd, 1));
  acc = std::fma(float(S), d * ad, acc);
  return std::fma(-float(Mn), dmin * ad, acc);
}

// Mn: the 8 mins times the activations' sums of their sub-blocks.
__attribute__((target("sse4.1"), always_inline)) inline int32_t mins_dot(uint64_t mins,
                                                                         const int16_t* sum32) {
  const __m128i m = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(mins)));
  __m128i p = _mm_madd_epi16(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(sum32)));
  p = _mm_add_epi32(p, _mm_shuffle_epi32(p, 0x4E));
  p = _mm_add_epi32(p, _mm_shuffle_epi32(p, 0xB1));
  return _mm_cvtsi128_si32(p);
}

// vpermw indices that spread a block's 8 scales (16 bits each) over the four code vectors'
// halves: scale pairs (0, 2), (1, 3), (4, 6), (5, 7), 16 lanes each.
__attribute__((target("avx512f"))) void scale_index(__m512i ix[4]) {
  alignas(64) int16_t idx[4][32];
  static constexpr int kPair[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  for (int v = 0; v < 4; ++v) {
    for (int l = 0; l < 32; ++l) idx[v][l] = int16_t(kPair[v][l / 16]);
    ix[v] = _mm512_load_si512(idx[v]);
  }
}

// One row's block: 16 lanes whose sum is S (each lane an exact partial of sc_j * code *
// activation), given its scales and mins.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i block_sums(
    const uint8_t* blk, const int8_t* act, const __m512i* ix, const ScalesMins& sm) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  const __m512i scv =
      _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sm.scales))));
  const __m512i q0 = _mm512_loadu_si512(blk + 16), q1 = _mm512_loadu_si512(blk + 80);
  const __m512i codes[4] = {
      _mm512_and_si512(q0, low), _mm512_and_si512(_mm512_srli_epi16(q0, 4), low),
      _mm512_and_si512(q1, low), _mm512_and_si512(_mm512_srli_epi16(q1, 4), low)};
  __m512i sum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v) {
    const __m512i p = _mm512_maddubs_epi16(codes[v], _mm512_loadu_si512(act + 64 * v));
    sum = _mm512_add_epi32(sum, _mm512_madd_epi16(p, _mm512_permutexvar_epi16(ix[v], scv)));
  }
  return sum;
}

// table: null, or every block's scales and mins decoded ahead (row n's block b at n * nb + b).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c,sse4.1"))) void rows_avx512(
    const uint8_t* w, int64_t row_bytes, int64_t n0, int64_t n1, int64_t nb, const Act& a,
    const ScalesMins* table, float* y) {
  __m512i ix[4];
  scale_index(ix);
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w + n * row_bytes;
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = row + b * kBlockBytes;
      const ScalesMins sm = table != nullptr ? table[n * nb + b] : scales_mins(blk + 4);
      const __m512i sum = block_sums(blk, a.permuted.data() + b * kBlock, ix, sm);
      const int32_t S = _mm512_reduce_add_epi32(sum);
      const int32_t Mn = mins_dot(sm.mins, a.sum32.data() + b * 8);
      acc = block_step(acc, S, Mn, blk, a.d[size_t(b)]);
    }
    y[n] = acc;
  }
}

// Lane r: the total of s[r]'s 16 lanes (pairs interleaved, then the 128-bit lanes added).
__attribute__((target("avx512f,avx2"), always_inline)) inline __m128i totals4(const __m512i* s) {
  const __m512i t01 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(s[0], s[1]), _mm512_unpackhi_epi32(s[0], s[1]));
  const __m512i t23 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(s[2], s[3]), _mm512_unpackhi_epi32(s[2], s[3]));
  const __m512i u =
      _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23), _mm512_unpackhi_epi64(t01, t23));
  const __m256i v = _mm256_add_epi32(_mm512_castsi512_si256(u), _mm512_extracti64x4_epi64(u, 1));
  return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
// Lane r: the total of m[r]'s 4 lanes.
__attribute__((target("ssse3"), always_inline)) inline __m128i totals4(const __m128i* m) {
  return _mm_hadd_epi32(_mm_hadd_epi32(m[0], m[1]), _mm_hadd_epi32(m[2], m[3]));
}
// d (lanes 0-3) and dmin (lanes 4-7) of four blocks' leading f16 pairs.
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 scales4(const uint32_t* dd) {
  return _mm256_permutevar8x32_ps(
      _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(dd))),
      _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

// Four rows at a time: the activations loaded once for the four, each row's integer sums as
// above, then the four rows' reductions, mins and float steps done side by side in one vector
// (the same operations per row: lane r of each vector is row r's scalar step).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,sse4.1"))) void
rows4_avx512(const uint8_t* w, int64_t row_bytes, int64_t n0, int64_t n1, int64_t nb, const Act& a,
             const ScalesMins*, float* y) {
  __m512i ix[4];
  scale_index(ix);
  for (int64_t n = n0; n < n1; n += 4) {
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const int8_t* act = a.permuted.data() + b * kBlock;
      const __m128i sum16 =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(&a.sum32[size_t(b * 8)]));
      __m512i s[4];
      __m128i mn[4];
      uint32_t dd[4];
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
        const uint8_t* blk = w + (n + r) * row_bytes + b * kBlockBytes;
        // Four rows are four streams the prefetchers follow badly: fetch the next four rows'
        // block (2.3 KB ahead at K = 1024) by hand.
        _mm_prefetch(reinterpret_cast<const char*>(blk + 4 * row_bytes), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(blk + 4 * row_bytes + 64), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(blk + 4 * row_bytes + 128), _MM_HINT_T0);
        const ScalesMins sm = scales_mins(blk + 4);
        s[r] = block_sums(blk, act, ix, sm);
        mn[r] = _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sm.mins))), sum16);
        std::memcpy(&dd[r], blk, 4);
      }
      const __m128i S = totals4(s);
      const __m128i Mn = totals4(mn);
      const __m256 dm = scales4(dd);
      const __m128 ad = _mm_set1_ps(a.d[size_t(b)]);
      acc = _mm_fmadd_ps(_mm_cvtepi32_ps(S), _mm_mul_ps(_mm256_castps256_ps128(dm), ad), acc);
      acc = _mm_fnmadd_ps(_mm_cvtepi32_ps(Mn), _mm_mul_ps(_mm256_extractf128_ps(dm, 1), ad), acc);
    }
    _mm_storeu_ps(y + n, acc);
  }
}

// One row, four blocks at a time: the row stays one stream, and the four blocks' reductions,
// mins and f16 scales are done side by side; the float steps then run block after block.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,sse4.1,ssse3"))) void
blocks4_avx512(const uint8_t* w, int64_t row_bytes, int64_t n0, int64_t n1, int64_t nb,
               const Act& a, const ScalesMins*, float* y) {
  __m512i ix[4];
  scale_index(ix);
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w + n * row_bytes;
    float acc = 0.0f;
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
      __m512i s[4];
      __m128i mn[4];
      uint32_t dd[4];
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const uint8_t* blk = row + (b + k) * kBlockBytes;
        const ScalesMins sm = scales_mins(blk + 4);
        s[k] = block_sums(blk, a.permuted.data() + (b + k) * kBlock, ix, sm);
        mn[k] = _mm_madd_epi16(
            _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sm.mins))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(&a.sum32[size_t((b + k) * 8)])));
        std::memcpy(&dd[k], blk, 4);
      }
      const __m256 dm = scales4(dd);
      const __m128 ad = _mm_loadu_ps(&a.d[size_t(b)]);
      alignas(16) float S[4], Mn[4], d[4], dmin[4];
      _mm_store_ps(S, _mm_cvtepi32_ps(totals4(s)));
      _mm_store_ps(Mn, _mm_cvtepi32_ps(totals4(mn)));
      _mm_store_ps(d, _mm_mul_ps(_mm256_castps256_ps128(dm), ad));
      _mm_store_ps(dmin, _mm_mul_ps(_mm256_extractf128_ps(dm, 1), ad));
      for (int k = 0; k < 4; ++k) {
        acc = std::fma(S[k], d[k], acc);
        acc = std::fma(-Mn[k], dmin[k], acc);
      }
    }
    for (; b < nb; ++b) {
      const uint8_t* blk = row + b * kBlockBytes;
      const ScalesMins sm = scales_mins(blk + 4);
      const __m512i sum = block_sums(blk, a.permuted.data() + b * kBlock, ix, sm);
      acc = block_step(acc, _mm512_reduce_add_epi32(sum), mins_dot(sm.mins, a.sum32.data() + b * 8),
                       blk, a.d[size_t(b)]);
    }
    y[n] = acc;
  }
}

__attribute__((target("avx2,fma,f16c,sse4.1"))) void rows_avx2(const uint8_t* w, int64_t row_bytes,
                                                               int64_t n0, int64_t n1, int64_t nb,
                                                               const Act& a,
                                                               const ScalesMins* table, float* y) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w + n * row_bytes;
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = row + b * kBlockBytes;
      const ScalesMins sm = table != nullptr ? table[n * nb + b] : scales_mins(blk + 4);
      const __m128i sc = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sm.scales)));
      // Sub-block j's scale in every 16-bit lane: a byte shuffle of the 8 scales.
      const __m256i scv = _mm256_broadcastsi128_si256(sc);
      const int8_t* act = a.natural.data() + b * kBlock;
      __m256i sum = _mm256_setzero_si256();
      for (int g = 0; g < 4; ++g) {  // 32 bytes of codes: sub-blocks 2g (low), 2g + 1 (high)
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * g));
        const __m256i lo = _mm256_maddubs_epi16(
            _mm256_and_si256(q, low),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 64 * g)));
        const __m256i hi = _mm256_maddubs_epi16(
            _mm256_and_si256(_mm256_srli_epi16(q, 4), low),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 64 * g + 32)));
        const __m256i sc_lo =
            _mm256_shuffle_epi8(scv, _mm256_set1_epi16(int16_t(0x0100 + 0x0404 * g)));
        const __m256i sc_hi =
            _mm256_shuffle_epi8(scv, _mm256_set1_epi16(int16_t(0x0302 + 0x0404 * g)));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(lo, sc_lo));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(hi, sc_hi));
      }
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
      const int32_t S = _mm_cvtsi128_si32(s4);
      const int32_t Mn = mins_dot(sm.mins, a.sum32.data() + b * 8);
      acc = block_step(acc, S, Mn, blk, a.d[size_t(b)]);
    }
    y[n] = acc;
  }
}

// A plain read of rows [n0, n1): the bound the row kernel is measured against.
__attribute__((target("avx2"))) uint64_t read_rows(const uint8_t* w, int64_t row_bytes, int64_t n0,
                                                   int64_t n1) {
  __m256i x = _mm256_setzero_si256();
  const uint8_t* p = w + n0 * row_bytes;
  const uint8_t* end = w + n1 * row_bytes;
  for (; p + 32 <= end; p += 32)
    x = _mm256_xor_si256(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return uint64_t(_mm256_extract_epi64(x, 0)) ^ uint64_t(_mm256_extract_epi64(x, 3));
}

double seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t N = 131072, K = 1024;
  int repeats = 15;
  // gemm() and the row kernel on the same ISA: ANCHORAGE_ISA=avx2 forces both.
  const anchorage::core::Isa active = anchorage::core::active_isa();
  if (active == anchorage::core::Isa::kScalar) {
    std::fprintf(stderr, "the probe has AVX2 and AVX-512 row kernels only\n");
    return 2;
  }
  const std::string isa(anchorage::core::isa_name(active));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--n") N = std::atoll(argv[i + 1]);
    if (flag == "--k") K = std::atoll(argv[i + 1]);
    if (flag == "--repeats") repeats = std::atoi(argv[i + 1]);
  }
  if (K % kBlock != 0 || N % 32 != 0) {
    std::fprintf(stderr, "--k must be a multiple of 256 and --n of 32\n");
    return 2;
  }
  if (kernels::quant_dot() != kernels::QuantDot::kInt8) {
    std::fprintf(stderr,
                 "the probe checks the integer-dot arithmetic: unset ANCHORAGE_QUANT_DOT\n");
    return 2;
  }
  const int64_t nb = K / kBlock, row_bytes = nb * kBlockBytes;
  // Random weights as GGUF Q4_K rows, and their panels.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  AlignedBuffer rows(size_t(N * row_bytes));
  {
    std::vector<float> f(static_cast<size_t>(K));
    for (int64_t n = 0; n < N; ++n) {
      for (float& v : f) v = normal(rng);
      kernels::quantize_row(DType::kQ4_K, f.data(), rows.as<uint8_t>() + n * row_bytes, K);
    }
  }
  const kernels::PackedWeight panels =
      kernels::PackedWeight::from_rows(rows.as<uint8_t>(), DType::kQ4_K, N, K, DType::kQ4_K);
  std::vector<float> x(static_cast<size_t>(K));
  for (float& v : x) v = normal(rng);
  const kernels::ActFormat f = kernels::act_format(DType::kQ4_K, K);
  AlignedBuffer act_row(size_t(f.row_bytes));
  kernels::quantize_act_row(DType::kQ4_K, x.data(), K, act_row.as<uint8_t>());
  const Act act = prepare(act_row.as<uint8_t>(), f, K);
  // The row-major kernels of this ISA, each checked against gemm() and timed.
  using RowKernel = void (*)(const uint8_t*, int64_t, int64_t, int64_t, int64_t, const Act&,
                             const ScalesMins*, float*);
  struct Variant {
    const char* name;
    RowKernel kernel;
    bool table;  // reads the side table of decoded scales
  };
  const std::vector<Variant> variants =
      isa == "avx512"
          ? std::vector<Variant>{{"rows", rows_avx512, false},
                                 {"rows4", rows4_avx512, false},
                                 {"blocks4", blocks4_avx512, false},
                                 {"rows_table", rows_avx512, true}}
          : std::vector<Variant>{{"rows", rows_avx2, false}, {"rows_table", rows_avx2, true}};
  // The side table a load would write beside the mapped file: every block's 8 scales and 8 mins
  // as bytes (16 bytes a 144-byte block), timed as a load would pay it (one thread).
  std::vector<ScalesMins> table(static_cast<size_t>(N * nb));
  const double table_s = seconds([&] {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t b = 0; b < nb; ++b)
        table[size_t(n * nb + b)] =
            scales_mins(rows.as<uint8_t>() + n * row_bytes + b * kBlockBytes + 4);
  });

  std::printf(
      "{\"n\": %lld, \"k\": %lld, \"type\": \"q4_k\", \"isa\": \"%s\", \"weight_mb\": %.1f,"
      " \"table_mb\": %.1f, \"table_build_ms\": %.1f, \"runs\": [",
      (long long)N, (long long)K, isa.c_str(), double(N * row_bytes) / 1e6,
      double(table.size() * sizeof(ScalesMins)) / 1e6, table_s * 1e3);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    const int64_t tasks = N / kRowsPerTask + (N % kRowsPerTask != 0);
    auto over_rows = [&](const std::function<void(int64_t, int64_t)>& fn) {
      pool.parallel_for(
          tasks, [&](int64_t t) { fn(t * kRowsPerTask, std::min(N, (t + 1) * kRowsPerTask)); });
    };
    std::vector<float> y_panels(static_cast<size_t>(N)), y(static_cast<size_t>(N));
    std::vector<uint64_t> sink(static_cast<size_t>(tasks));
    auto run_panels = [&] { kernels::gemm(x.data(), 1, K, panels, y_panels.data(), N, &pool); };
    auto run_read = [&] {
      over_rows([&](int64_t n0, int64_t n1) {
        sink[size_t(n0 / kRowsPerTask)] = read_rows(rows.as<uint8_t>(), row_bytes, n0, n1);
      });
    };
    auto run = [&](const Variant& v) {
      return [&, v] {
        over_rows([&](int64_t n0, int64_t n1) {
          v.kernel(rows.as<uint8_t>(), row_bytes, n0, n1, nb, act, v.table ? table.data() : nullptr,
                   y.data());
        });
      };
    };
    run_panels();
    for (const Variant& v : variants) {
      std::fill(y.begin(), y.end(), -1.0f);
      run(v)();
      if (std::memcmp(y_panels.data(), y.data(), y.size() * sizeof(float)) != 0) {
        std::fprintf(stderr, "%s: the row kernel's outputs differ from gemm()'s\n", v.name);
        return 1;
      }
    }
    // Best of the repeats, each repeat alternating the panels, the read and every variant.
    double panels_s = 1e9, read_s = 1e9;
    std::vector<double> best(variants.size(), 1e9);
    for (int r = 0; r < repeats; ++r) {
      panels_s = std::min(panels_s, seconds(run_panels));
      read_s = std::min(read_s, seconds(run_read));
      for (size_t i = 0; i < variants.size(); ++i)
        best[i] = std::min(best[i], seconds(run(variants[i])));
    }
    const double gb = double(N * row_bytes) / 1e9;
    std::printf(
        "%s{\"threads\": %d, \"panels_ms\": %.3f, \"read_ms\": %.3f, "
        "\"panels_gb_s\": %.1f, \"read_gb_s\": %.1f, \"panels_over_read\": %.3f",
        threads == 1 ? "" : ", ", threads, panels_s * 1e3, read_s * 1e3, gb / panels_s, gb / read_s,
        read_s / panels_s);
    for (size_t i = 0; i < variants.size(); ++i) {
      const char* name = variants[i].name;
      std::printf(
          ", \"%s_ms\": %.3f, \"%s_gb_s\": %.1f, \"%s_over_read\": %.3f, "
          "\"%s_over_panels\": %.3f",
          name, best[i] * 1e3, name, gb / best[i], name, read_s / best[i], name,
          panels_s / best[i]);
    }
    std::printf(", \"bits_equal\": true}");
  }
  std::printf("]}\n");
  return 0;
}

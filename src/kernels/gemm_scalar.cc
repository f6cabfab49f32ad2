// The GEMM block kernel without SIMD (contract: kernels/gemm.h, kernels/gemm_job.h): the
// fallback for CPUs without AVX2 + FMA, and the plainest statement of the order the SIMD
// kernels must reproduce: per output element, acc = +0.0f, then acc = fma(x[k], w[k], acc)
// for k = 0 .. K-1. std::fma rounds once, exactly like a vector FMA lane, so the bits match.
#include <cmath>

#include "core/dtype.h"
#include "kernels/gemm_job.h"
#include "kernels/panel_layout.h"
#include "kernels/q3_k_codes.h"

namespace anchorage::kernels::isa_scalar {
namespace {

inline float load_w(const float* w, int64_t i) {
  return w[i];
}
inline float load_w(const uint16_t* w, int64_t i) {
  return core::bf16_to_f32(w[i]);
}

// One row against one panel: 32 chains, walked k-major so the panel is read in order.
template <typename T>
void row_panel(const float* x, const T* panel, int64_t K, float* y, int64_t n_cols,
               bool accumulate) {
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = accumulate && j < n_cols ? y[j] : 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float xv = x[k];
    const T* wk = panel + k * 32;
    for (int j = 0; j < 32; ++j) acc[j] = std::fma(xv, load_w(wk, j), acc[j]);
  }
  for (int64_t j = 0; j < n_cols && j < 32; ++j) y[j] = acc[j];
}

template <typename T>
void run_block(const GemmJob& job, const T* panels, const GemmBlock& b) {
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; ++m) {
      row_panel(job.x + m * job.ldx, panels + p * job.K * 32, job.K, job.y + m * job.ldy + p * 32,
                job.N - p * 32, job.accumulate);
    }
  }
}

#include "kernels/unpack_impl.h"

// The loops every scalar integer-dot kernel below shares: per panel and row, 32 outputs from
// +0.0f, then `step(blk, act, kb, acc)` for each k block of kBlockBytes byte rows (32 lanes
// each) in order, act the row's activations (kernels/quant_dot.h: quants, scales, sums); the
// row's columns stored at the end.
struct ActRow {
  const int8_t* q;   // quants
  const float* d;    // a block scale per kernels/quant_dot.h ActFormat block
  const int32_t* s;  // a sum of quants per ActFormat sum_block
};

template <int kBlockBytes, int kBlockInputs, typename Step>
void int8_rows(const GemmJob& job, const GemmBlock& b, Step step) {
  const uint8_t* panels = static_cast<const uint8_t*>(job.panels);
  const int64_t nb = job.K / kBlockInputs, pstride = nb * 32 * kBlockBytes;
  for (int64_t p = b.p0; p < b.p1; ++p) {
    for (int64_t m = b.m0; m < b.m1; ++m) {
      const uint8_t* row = job.xq + m * job.ldq;
      const ActRow act{reinterpret_cast<const int8_t*>(row),
                       reinterpret_cast<const float*>(row + job.xd_off),
                       reinterpret_cast<const int32_t*>(row + job.xs_off)};
      float acc[32] = {};
      for (int64_t kb = 0; kb < nb; ++kb)
        step(panels + p * pstride + kb * 32 * kBlockBytes, act, kb, acc);
      float* y = job.y + m * job.ldy + p * 32;
      for (int64_t j = 0; j < job.N - p * 32 && j < 32; ++j) y[j] = acc[j];
    }
  }
}

// Lane l's f16 at byte rows r and r + 1 of a k block, as f32.
float lane_f16(const uint8_t* blk, int r, int l) {
  return core::f16_to_f32(uint16_t(blk[r * 32 + l] | blk[(r + 1) * 32 + l] << 8));
}

// The integer-dot Q8_0 GEMM (kernels/quant_dot.h), the plainest statement of what the SIMD
// kernels (gemm_int8_impl.h, gemm_int8_vnni.cc) compute: per output, acc = +0.0f, then for
// every 32-input block kb in order acc = fma(float(isum), dw * dx, acc), where isum = the exact
// int32 sum of weight quant x activation quant over the block, dw the block's f16 scale as f32
// and dx the activations' block scale. The integer sum is exact in any order; the float steps
// are spelled out (-ffp-contract=off), so every ISA gives these bits.
void int8_q8_0(const GemmJob& job, const GemmBlock& b) {
  int8_rows<34, 32>(job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
    int32_t isum[32] = {};
    for (int i = 0; i < 32; ++i) {
      const int8_t* w = reinterpret_cast<const int8_t*>(quad_row(blk, 2 + i, 2));
      const int32_t ai = a.q[kb * 32 + i];
      for (int l = 0; l < 32; ++l) isum[l] += int32_t(w[4 * l]) * ai;
    }
    for (int l = 0; l < 32; ++l)
      acc[l] = std::fma(float(isum[l]), lane_f16(blk, 0, l) * a.d[kb], acc[l]);
  });
}

// Q4_0, IQ4_NL, Q5_0, Q4_1 and Q5_1 (32-blocks: f16 d, for Q4_1 / Q5_1 the f16 m, for Q5_0 /
// Q5_1 the u32 of fifth bits qh (bit e of byte e / 8 for input e), then 16 rows whose low / high
// nibbles are inputs e / 16 + e): as Q8_0 with the signed code w = q - 8 (Q4_0), IQ4_NL's table
// level kUnpackIq4Values[q], (q | fifth bit << 4) - 16 (Q5_0), or the unsigned code (Q4_1, Q5_1),
// whose min then adds a second float step: acc = fma(float(a_sum), m * dx, acc).
template <int kType>
void int8_q4_32(const GemmJob& job, const GemmBlock& b) {
  constexpr bool kMin = kType == int(core::DType::kQ4_1) || kType == int(core::DType::kQ5_1);
  constexpr bool kFive = kType == int(core::DType::kQ5_0) || kType == int(core::DType::kQ5_1);
  constexpr int kQh = kMin ? 4 : 2, kQs = kQh + (kFive ? 4 : 0);
  int8_rows<kQs + 16, 32>(job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
    for (int l = 0; l < 32; ++l) {
      int32_t isum = 0;
      for (int i = 0; i < 32; ++i) {
        const uint8_t byte = quad_row(blk, kQs + i % 16, kQh)[4 * l];
        int q = i < 16 ? byte & 0xF : byte >> 4;
        if (kFive) q |= ((quad_row(blk, kQh + i / 8, kQh)[4 * l] >> (i % 8)) & 1) << 4;
        int w = q;
        if (kType == int(core::DType::kIQ4_NL)) w = kUnpackIq4Values[q];
        if (kType == int(core::DType::kQ5_0)) w = q - 16;
        if (kType == int(core::DType::kQ4_0)) w = q - 8;
        isum += w * a.q[kb * 32 + i];
      }
      acc[l] = std::fma(float(isum), lane_f16(blk, 0, l) * a.d[kb], acc[l]);
      if (kMin) acc[l] = std::fma(float(a.s[kb]), lane_f16(blk, 2, l) * a.d[kb], acc[l]);
    }
  });
}

// Q4_K sub-block j's 6-bit scale and min from a lane's 12 scale bytes (as kernels/quant.cc).
void q4_k_scale_min(int j, const uint8_t* s, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// The integer-dot Q4_K GEMM (activations in 256-blocks, sums per 16): per output and 256-block,
// S = sum over the 8 sub-blocks of sc_j * (exact sum of q x a over its 32 inputs), Mn = sum of
// m_j * (the activations' sum over those 32 inputs), both exact int32; then, blocks in order
// from +0.0f, acc = fma(float(S), d * dx, acc) and acc = fma(-float(Mn), dmin * dx, acc).
// Q5_K (kQ5: 176 byte rows, the 32 rows of fifth bits qh before the nibbles) is the same with
// the 5-bit code q | ((qh[e] >> j) & 1) << 4. The nibbles and qh are in quads (quad_row).
template <bool kQ5>
void int8_q4_k(const GemmJob& job, const GemmBlock& b) {
  constexpr int kBlockBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  int8_rows<kBlockBytes, 256>(
      job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
        for (int l = 0; l < 32; ++l) {
          uint8_t sb[12];
          for (int i = 0; i < 12; ++i) sb[i] = blk[(4 + i) * 32 + l];
          int32_t S = 0, Mn = 0;
          for (int j = 0; j < 8; ++j) {
            int sc, mn;
            q4_k_scale_min(j, sb, &sc, &mn);
            int32_t isum = 0;
            for (int e = 0; e < 32; ++e) {
              const uint8_t byte = quad_row(blk, kQs + 32 * (j / 2) + e)[4 * l];
              int q = j % 2 == 0 ? byte & 0xF : byte >> 4;
              if (kQ5) q |= ((quad_row(blk, 16 + e)[4 * l] >> j) & 1) << 4;
              isum += q * a.q[kb * 256 + 32 * j + e];
            }
            S += sc * isum;
            Mn += mn * (a.s[kb * 16 + 2 * j] + a.s[kb * 16 + 2 * j + 1]);
          }
          acc[l] = std::fma(float(S), lane_f16(blk, 0, l) * a.d[kb], acc[l]);
          acc[l] = std::fma(-float(Mn), lane_f16(blk, 2, l) * a.d[kb], acc[l]);
        }
      });
}

// The integer-dot IQ4_XS GEMM (136 byte rows: d, scales_h in rows 2-3, scales_l in rows 4-7,
// then sub-block j's 16 rows of codes at row 8 + 16j, in quads, low / high nibbles inputs e / 16 +
// e; activations in 256-blocks): per output and 256-block, S = sum over the 8 sub-blocks of (ls_j -
// 32) * (exact sum of level x a over its 32 inputs), exact int32; then, blocks in order from +0.0f,
// acc = fma(float(S), d * dx, acc).
void int8_iq4_xs(const GemmJob& job, const GemmBlock& b) {
  int8_rows<136, 256>(job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
    for (int l = 0; l < 32; ++l) {
      const int sh = blk[2 * 32 + l] | blk[3 * 32 + l] << 8;
      int32_t S = 0;
      for (int j = 0; j < 8; ++j) {
        const int ls = ((blk[(4 + j / 2) * 32 + l] >> (4 * (j % 2))) & 0xF) | ((sh >> (2 * j)) & 3)
                                                                                  << 4;
        int32_t isum = 0;
        for (int e = 0; e < 32; ++e) {
          const uint8_t byte = quad_row(blk, 8 + 16 * j + e % 16)[4 * l];
          isum += kUnpackIq4Values[e < 16 ? byte & 0xF : byte >> 4] * a.q[kb * 256 + 32 * j + e];
        }
        S += (ls - 32) * isum;
      }
      acc[l] = std::fma(float(S), lane_f16(blk, 0, l) * a.d[kb], acc[l]);
    }
  });
}

// The integer-dot Q6_K GEMM (activations in 256-blocks, sums per 16): per output and 256-block,
// S = sum over the 16 sub-blocks of sc_j * (exact sum of q x a over its 16 inputs - 32 * the
// activations' sum over them) (= sum of (q - 32) x a, q the unsigned 6-bit code), exact int32;
// then, blocks in order from +0.0f, acc = fma(float(S), d * dx, acc). Input 128h + 32t + e is
// ql row 64h + 32(t % 2) + e (low nibble for t < 2, high for t >= 2) with bits 2t, 2t+1 of qh
// row 128 + 32h + e above it (ql and qh in quads; each row where q6_k_row puts it: panel_byte).
void int8_q6_k(const GemmJob& job, const GemmBlock& b) {
  int8_rows<210, 256>(job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
    const auto at = [blk](int r) { return panel_byte<core::DType::kQ6_K>(blk, r); };
    for (int l = 0; l < 32; ++l) {
      int32_t isum[16] = {};
      for (int k = 0; k < 256; ++k) {
        const int h = k / 128, t = (k % 128) / 32, e = k % 32;
        const uint8_t ql = at(64 * h + 32 * (t % 2) + e)[4 * l];
        const uint8_t qh = at(128 + 32 * h + e)[4 * l];
        const int q = (t < 2 ? ql & 0xF : ql >> 4) | ((qh >> (2 * t)) & 3) << 4;
        isum[k / 16] += q * a.q[kb * 256 + k];
      }
      int32_t S = 0;
      for (int j = 0; j < 16; ++j) {
        const int sc = static_cast<int8_t>(at(192 + j)[l]);
        S += sc * (isum[j] - 32 * a.s[kb * 16 + j]);
      }
      acc[l] = std::fma(float(S), lane_f16(blk, q6_k_row(208), l) * a.d[kb], acc[l]);
    }
  });
}

// Q3_K and Q2_K (activations in 256-blocks, sums per 16): Q2_K's input 128h + 32s + e (e < 32)
// is bits 2s, 2s + 1 of qs row 32h + e; Q3_K's 3-bit code of it is q3_k_code(h, s) of the code
// rows e, 32 + e, 64 + e (kernels/q3_k_codes.h); sub-block j = input / 16. Q3_K (110 byte rows:
// codes 0-95, scales 96-107, d 108-109; each byte where the panel's row order puts it, as Q2_K's:
// panel_byte): S = sum_j (sc_j - 32) * (exact sum of q x a over sub-block j - 4 * its activation
// sum), acc = fma(float(S), d * dx, acc). Q2_K (84 byte rows: scales 0-15 = sc | m << 4, qs 16-79,
// d 80-81, dmin 82-83): as Q4_K over 16 sub-blocks of 16.
template <bool kQ3>
void int8_q3_q2_k(const GemmJob& job, const GemmBlock& b) {
  constexpr int kQs = kQ3 ? 32 : 16;
  constexpr core::DType kT = kQ3 ? core::DType::kQ3_K : core::DType::kQ2_K;
  int8_rows<kQ3 ? 110 : 84, 256>(
      job, b, [](const uint8_t* blk, const ActRow& a, int64_t kb, float* acc) {
        const auto at = [blk](int r) { return panel_byte<kT>(blk, r); };
        for (int l = 0; l < 32; ++l) {
          int32_t isum[16] = {};
          for (int k = 0; k < 256; ++k) {
            const int h = k / 128, sh = (k % 128) / 32, e = k % 32;
            const int q = kQ3 ? q3_k_code(at(e)[4 * l], at(32 + e)[4 * l], at(64 + e)[4 * l], h, sh)
                              : (at(kQs + 32 * h + e)[4 * l] >> (2 * sh)) & 3;
            isum[k / 16] += q * a.q[kb * 256 + k];
          }
          int32_t S = 0, Mn = 0;
          for (int j = 0; j < 16; ++j) {
            if (kQ3) {
              const int low = j < 8 ? at(96 + j)[l] & 0xF : at(96 + j - 8)[l] >> 4;
              const int high = (at(104 + j % 4)[l] >> (2 * (j / 4))) & 3;
              S += ((low | high << 4) - 32) * (isum[j] - 4 * a.s[kb * 16 + j]);
            } else {
              const uint8_t sc = at(j)[l];
              S += (sc & 0xF) * isum[j];
              Mn += (sc >> 4) * a.s[kb * 16 + j];
            }
          }
          acc[l] = std::fma(float(S), lane_f16(blk, q3_q2_k_row<kQ3>(kQ3 ? 108 : 80), l) * a.d[kb],
                            acc[l]);
          if (!kQ3) acc[l] = std::fma(-float(Mn), lane_f16(blk, q2_k_row(82), l) * a.d[kb], acc[l]);
        }
      });
}

}  // namespace

void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out) {
  unpack_kblocks_impl(dtype, blocks, n, out);
}

void unpack_f16(const uint16_t* src, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = core::f16_to_f32(src[i]);
}

void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b) {
  switch (core::DType(dtype)) {
    case core::DType::kQ8_0:
      return int8_q8_0(job, b);
    case core::DType::kQ4_K:
      return int8_q4_k<false>(job, b);
    case core::DType::kQ5_K:
      return int8_q4_k<true>(job, b);
    case core::DType::kIQ4_XS:
      return int8_iq4_xs(job, b);
    case core::DType::kQ6_K:
      return int8_q6_k(job, b);
    case core::DType::kQ4_0:
      return int8_q4_32<int(core::DType::kQ4_0)>(job, b);
    case core::DType::kIQ4_NL:
      return int8_q4_32<int(core::DType::kIQ4_NL)>(job, b);
    case core::DType::kQ5_0:
      return int8_q4_32<int(core::DType::kQ5_0)>(job, b);
    case core::DType::kQ4_1:
      return int8_q4_32<int(core::DType::kQ4_1)>(job, b);
    case core::DType::kQ5_1:
      return int8_q4_32<int(core::DType::kQ5_1)>(job, b);
    case core::DType::kQ3_K:
      return int8_q3_q2_k<true>(job, b);
    case core::DType::kQ2_K:
      return int8_q3_q2_k<false>(job, b);
    default:
      break;
  }
}

void gemm_block(const GemmJob& job, const GemmBlock& b) {
  if (job.bf16) {
    run_block(job, static_cast<const uint16_t*>(job.panels), b);
  } else {
    run_block(job, static_cast<const float*>(job.panels), b);
  }
}

}  // namespace anchorage::kernels::isa_scalar

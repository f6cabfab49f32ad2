// GemmJob: the plain description of one gemm() call that gemm.cc hands to the per-ISA block
// kernels (gemm_avx512.cc, gemm_avx2.cc, gemm_scalar.cc), plus the blocking they share.
//
// Raw pointers and integers only, on purpose: the ISA files are compiled with different -m
// flags, and a std:: template instantiated in one of them could be merged by the linker into
// callers built for a lower ISA (an ODR trap). So threading (std::function) stays in gemm.cc.
//
// A block call computes y[m0, m1) x panels [p0, p1) over the whole of K. Blocks never share
// an output element, so threads may run distinct blocks of one job at the same time.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

struct GemmJob {
  const float* x = nullptr;  // [M][ldx] f32
  int64_t ldx = 0;
  const void* panels = nullptr;  // PackedWeight panel 0; panel p starts at element p * K * 32
  bool bf16 = false;             // panel elements are bf16 (else f32)
  // Chains start from the partial sums already in y instead of +0.0f (gemm.cc runs the
  // dequantizing path one K block at a time; an f32 store/load between blocks is exact).
  bool accumulate = false;
  int64_t K = 0;
  int64_t N = 0;
  float* y = nullptr;  // [M][ldy] f32
  int64_t ldy = 0;
  // The integer-dot path (gemm_int8_impl.h): the M rows' activations quantized by
  // quantize_act_row(), row m at xq + m * ldq (kernels/quant_dot.h ActFormat: K int8, then the
  // f32 scales at byte xd_off, the int32 sums at byte xs_off). x is unused there.
  const uint8_t* xq = nullptr;
  int64_t ldq = 0, xd_off = 0, xs_off = 0;
};

// The part of a job one task computes: rows [m0, m1), panels [p0, p1) (32 columns each).
struct GemmBlock {
  int64_t m0, m1, p0, p1;
};

// Blocking, measured on Zen 5 (docs/kernels.md); the values change speed, never a result.
// A block with more rows than one register tile walks K in blocks of kGemmKc (the partial
// sums go through y exactly between blocks) and runs its row tiles over kGemmKc x 32 x
// kGemmNcPanels weights (512 KiB in f32, 256 KiB in bf16: they stay in L2) while each tile's
// x slice (8 x kGemmKc f32 = 16 KiB on AVX-512) stays in L1.
constexpr int64_t kGemmKc = 512;
constexpr int64_t kGemmNcPanels = 8;
// Rows per block: the rows a block's weights are reused for before the next block reloads
// them from L3 or memory.
constexpr int64_t kGemmMc = 256;

namespace isa_scalar {
void gemm_block(const GemmJob& job, const GemmBlock& b);
// n k blocks of a quantized panel (dtype: a core::DType value) -> [n * B][32] f32
// (kernels/unpack_impl.h); f16 -> f32 of n contiguous halves.
void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out);
void unpack_f16(const uint16_t* src, int64_t n, float* out);
// The integer-dot GEMM of a block over panels of `dtype` (kernels/quant_dot.h): y = the float
// combination of exact integer block dots in block order, from +0.0f (gemm_int8_impl.h).
void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b);
}  // namespace isa_scalar
namespace isa_avx2 {
void gemm_block(const GemmJob& job, const GemmBlock& b);
// A block of at most 8 rows (decode, verify) over f16, Q8_0, Q4_K or Q6_K panels (dtype: a
// core::DType value) read in place (job.panels = panel 0 of the PackedWeight, whole K, chains
// from +0.0f), dequantized in registers: the same bits as unpacking (gemm_decode_impl.h).
void gemm_decode_block(int dtype, const GemmJob& job, const GemmBlock& b);
// n k blocks of a quantized panel (dtype: a core::DType value) -> [n * B][32] f32
// (kernels/unpack_impl.h); f16 -> f32 of n contiguous halves.
void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out);
void unpack_f16(const uint16_t* src, int64_t n, float* out);
void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b);  // vpmaddubsw
}  // namespace isa_avx2
namespace isa_avx512 {
void gemm_block(const GemmJob& job, const GemmBlock& b);
void gemm_decode_block(int dtype, const GemmJob& job, const GemmBlock& b);  // as isa_avx2's
// n k blocks of a quantized panel (dtype: a core::DType value) -> [n * B][32] f32
// (kernels/unpack_impl.h); f16 -> f32 of n contiguous halves.
void unpack_kblocks(int dtype, const uint8_t* blocks, int64_t n, float* out);
void unpack_f16(const uint16_t* src, int64_t n, float* out);
}  // namespace isa_avx512
// AVX-512 with VNNI (vpdpbusd): its own file (gemm_int8_vnni.cc, built with -mavx512vnni) and
// only the integer-dot path; an AVX-512 CPU without VNNI runs isa_avx2's, to the same bits.
namespace isa_vnni {
void gemm_int8_block(int dtype, const GemmJob& job, const GemmBlock& b);
}  // namespace isa_vnni

}  // namespace anchorage::kernels

// VectorKernelTable: the V16 kernel bodies of one ISA (norms, activations, RoPE rotation, conv1d,
// the GDN recurrence, argmax), as function pointers. The bodies are templates written once over V16
// (kernels/*_impl.h) and compiled three times, in kernels/vector_kernels_scalar.cc, _avx2.cc and
// _avx512.cc, each inside its own namespace (isa_scalar, isa_avx2, isa_avx512) so no inline
// symbol compiled with one ISA's flags is shared with another build. The public functions
// (norm.cc, activation.cc, rope.cc, conv1d.cc, gdn.cc, argmax.cc) pick the table of
// core::active_isa() per call. Every entry gives the same bits in every ISA (docs/kernels.md).
//
// Internal to kernels/ (and its tests); the tables are immutable, so any thread may read them.
#pragma once

#include <cstdint>

#include "core/isa.h"
#include "kernels/gdn.h"

namespace anchorage::kernels {

// V16 operations the test hook exercises one by one (tests/kernels/v16_test.cc).
enum class V16Op : int {
  kAdd = 0,
  kSub,
  kMul,
  kDiv,
  kFma,  // a * b + c
  kMax,
  kMin,
  kSqrt,
  kRound,
  kPow2i,     // a must hold integers in [-126, 127]
  kSelectLt,  // a < b ? c : a
  kNeg,
  kReduceAdd,     // out[0]
  kReduceMax,     // out[0]
  kLoadPartial,   // load_partial(a, n), stored whole
  kStorePartial,  // store_partial of a, n lanes, over c's copy in out
  kLoadBf16,      // a read as 16 uint16 (first 8 floats' bytes)
  kLoadBf16Partial,
  kLane,  // out[i] = a.lane(i)
  kExp,
  kSigmoid,
  kSilu,
  kCount
};

struct VectorKernelTable {
  // kernels/norm_impl.h. rmsnorm: weight w (one_plus: 1 + w).
  void (*rmsnorm)(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, bool one_plus,
                  float eps, float* y, int64_t ldy);
  void (*l2norm_heads)(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx, float eps,
                       float scale);
  void (*gated_rmsnorm)(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                        int64_t n_heads, int64_t d, const float* w, float eps, float* y,
                        int64_t ldy);
  // kernels/activation_impl.h.
  void (*swiglu)(const float* gate, const float* up, int64_t n, float* out);
  void (*mul_sigmoid)(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T, int64_t n);
  void (*add)(const float* x, const float* r, int64_t n, float* y);
  void (*exp)(const float* x, int64_t n, float* y);
  // kernels/rope_impl.h: rotates the first R dims of n_heads heads of width D at x, with
  // cos[i], sin[i] for i < R/2 (one token).
  void (*rope_rotate)(float* x, int64_t n_heads, int64_t D, int64_t R, const float* cos,
                      const float* sin);
  // kernels/conv1d_impl.h: conv1d_silu (conv1d.h) over C channels whose tail and weight rows
  // are ldc apart.
  void (*conv1d_silu)(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail,
                      const float* w, int64_t ldc, int64_t Kc, float* y, int64_t ldy);
  // kernels/gdn_impl.h: gdn_recurrence (gdn.h) restricted to value head h and the state
  // columns [j0, j1), all T tokens. Columns never mix in §2.7, so any column split gives the
  // same bits.
  void (*gdn_columns)(const GdnDims& dims, int64_t h, int64_t j0, int64_t j1, int64_t T,
                      const float* q, int64_t ldq, const float* k, int64_t ldk, const float* v,
                      int64_t ldv, const float* beta, const float* g, float* S, float* o,
                      int64_t ldo);
  // kernels/argmax_impl.h: argmax as declared in argmax.h.
  int64_t (*argmax)(const float* x, int64_t n);
  // Test hook: out = op over 16 lanes of a, b, c (n: lanes for the partial ops).
  void (*test_v16_op)(V16Op op, const float* a, const float* b, const float* c, int n, float* out);
};

// The table of one ISA (it must be one the CPU runs), and that of core::active_isa().
const VectorKernelTable& vector_kernels(core::Isa isa);
const VectorKernelTable& vector_kernels();

namespace isa_scalar {
extern const VectorKernelTable kVectorKernels;
}
namespace isa_avx2 {
extern const VectorKernelTable kVectorKernels;
}
namespace isa_avx512 {
extern const VectorKernelTable kVectorKernels;
}

}  // namespace anchorage::kernels

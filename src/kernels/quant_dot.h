// The integer-dot arithmetic for quantized weights (docs/kernels.md "Integer dot products").
//
// For the weight types it covers (int8_dot_type()), gemm() does not run the f32 FMA chain over
// dequantized weights: each row of activations is first quantized to 8-bit blocks here, and
// every output is a fixed-order float combination of exact integer block dot products. A row's
// quantization depends on that row only, and it is computed by this one baseline function for
// every ISA, so batch, thread and ISA invariance hold as before; what changes is the value: the
// result is no longer the f32 chain over dequantize_row()'s weights (gemm_ref.h has both
// definitions).
//
// The arithmetic is a process-wide setting: ANCHORAGE_QUANT_DOT=int8 (the default) or f32
// (the exact-f32 chain over dequantized weights, as before), read once; set_quant_dot() changes
// it (tests and benchmarks; only while no kernel runs). The setting enters the model manifest
// through kernel_arithmetic_name(), so caches never mix the two.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/dtype.h"

namespace anchorage::kernels {

enum class QuantDot { kF32 = 0, kInt8 = 1 };

QuantDot quant_dot();
void set_quant_dot(QuantDot q);
std::string_view quant_dot_name(QuantDot q);
bool parse_quant_dot(std::string_view s, QuantDot* out);

// True if weights of type t multiply through integer dot products under the current setting.
bool int8_dot_type(core::DType t);

// The activation format of a weight type with an integer dot (act_* functions below). A row of
// K activations is stored as: K int8 quants; at byte d_offset, K / block f32 scales (one per
// `block` inputs); at byte s_offset, K / sum_block int32 sums of quants (one per `sum_block`
// inputs). Row stride row_bytes (a multiple of 64).
struct ActFormat {
  int64_t block = 0;      // inputs per scale: 32 (Q8_0, Q4_x, Q5_x, IQ4_NL), 256 (K-quants, IQ4_XS)
  int64_t sum_block = 0;  // inputs per sum: 32 (Q8_0, Q4_x, Q5_x, IQ4_NL), 16 (K-quants, IQ4_XS)
  int64_t d_offset = 0, s_offset = 0, row_bytes = 0;
};
ActFormat act_format(core::DType weight_type, int64_t K);

// Quantizes one row x[0, K) for weights of weight_type into `row` (act_format() layout). Per
// block of B inputs: amax = the largest |x| (compared as the bits of |x|, so a NaN wins and the
// block's outputs become NaN); d = amax / 127; id = d != 0 ? 1 / d : 0; q = round-to-nearest-
// even(clamp(x * id, -127, 127)) with a NaN product taken as 0; each sum adds its quants.
void quantize_act_row(core::DType weight_type, const float* x, int64_t K, uint8_t* row);

}  // namespace anchorage::kernels

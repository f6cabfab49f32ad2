// Row conversions between f32 and every weight storage type (core/dtype.h): the plain types
// (f32, bf16, f16) and the block-quantized GGUF types Q8_0, Q4_K and Q6_K in ggml's exact
// block layouts (docs/kernels.md "Quantized weights").
//
// dequantize_row() is THE definition of a stored weight's value: the GEMM, PackedWeight::at()
// and the GGUF loader all read weights through it, so a weight has the same f32 value
// everywhere. It is plain baseline code (no ISA dispatch), and each value is computed in the
// order ggml's reference dequantizers use (d * q, or d*sc * q - dmin*m), so it is also the
// value llama.cpp reads.
//
// quantize_row() is a plain round-to-nearest quantizer (one pass, no error search and no
// importance matrix): valid blocks for writing test and random files, not llama.cpp's bits.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace anchorage::kernels {

// dst[0, n) = the values of the n elements of type t at src. n must be a multiple of
// core::dtype_block_elements(t); src holds core::dtype_row_bytes(t, n) bytes.
void dequantize_row(core::DType t, const void* src, float* dst, int64_t n);

// Writes n elements of src as type t into dst (core::dtype_row_bytes(t, n) bytes). n must be
// a multiple of core::dtype_block_elements(t). bf16 and f16 round to nearest even.
void quantize_row(core::DType t, const float* src, void* dst, int64_t n);

}  // namespace anchorage::kernels

// V16: sixteen f32 lanes, the one vector type every non-GEMM kernel is written with.
//
// A kernel's body is a template over V16 written once (kernels/*_impl.h) and compiled three
// times: kernels/*_scalar.cc, *_avx2.cc (two __m256) and *_avx512.cc (one __m512). Every V16
// operation is an IEEE-exact lane operation (add, sub, mul, div, sqrt, fma, min, max, round)
// or a fixed fold (reduce_add), so the three builds give the same bits: the ISA changes speed,
// never results (docs/exactness.md).
//
// Include this header only from a file that defines ANCHORAGE_V16_SCALAR, _AVX2 or _AVX512;
// each backend lives in its own namespace so the three builds never share a symbol.
#pragma once

#if defined(ANCHORAGE_V16_AVX512)
#include "kernels/simd/v16_avx512.h"
#elif defined(ANCHORAGE_V16_AVX2)
#include "kernels/simd/v16_avx2.h"
#elif defined(ANCHORAGE_V16_SCALAR)
#include "kernels/simd/v16_scalar.h"
#else
#error "define one of ANCHORAGE_V16_SCALAR / _AVX2 / _AVX512 before including v16.h"
#endif

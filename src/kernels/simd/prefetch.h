// prefetch_part: software prefetch of the weights a quantized GEMM tile reads a few KiB later.
// At M = 1 (decode) an integer-dot tile does so much work per weight byte that it keeps too
// few loads in flight for the hardware prefetcher to hold the stream at the read bandwidth:
// without this the VNNI Q6_K tile read 0.48 of a plain read of the same bytes, with it
// 1.03-1.07 (docs/kernels.md). The K-quant tiles need it still: without it their 0.8B decode
// steps took 1.2-1.6 x as long on VNNI and 1.1-2.7 x on AVX2. The 32-block types' tiles (Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL: VNNI's, and AVX2's one-row path) do not call it: they are
// faster without (docs/kernels.md "Prefetch"; since kKernelVersion 69-70). No #includes:
// include it inside the ISA file's anonymous namespace, after <immintrin.h> (internal linkage,
// so no definition is shared between files built for different ISAs).
#pragma once

// Part `step` of `steps` of the `bytes` at `from` into L1: a tile walking a k block in `steps`
// steps calls it once a step with `from` = the weights it reads next (the next k blocks of its
// panel, or the next panel's first ones: panels are contiguous). Reading past the weights is
// harmless for a prefetch.
ANCHORAGE_FORCE_INLINE void prefetch_part(const uint8_t* from, int bytes, int steps, int step) {
  const int lines = (bytes / 64 + steps - 1) / steps;
  for (int i = 0; i < lines; ++i)
    _mm_prefetch(reinterpret_cast<const char*>(from + 64 * (lines * step + i)), _MM_HINT_T0);
}

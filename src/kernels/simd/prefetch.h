// prefetch_part: software prefetch of the weights a quantized GEMM tile reads a few KiB later.
// At M = 1 (decode) an integer-dot tile does so much work per weight byte that it keeps too
// few loads in flight for the hardware prefetcher to hold the stream at the read bandwidth:
// without this the VNNI Q6_K tile (its rows then in GGUF's order) read 0.48 of a plain read of the
// same bytes, with it 1.03-1.07 (docs/kernels.md). The K-quant tiles need it still: without it
// their 0.8B decode steps took 1.2-1.6 x as long on VNNI and 1.1-2.7 x on AVX2. The 32-block types'
// tiles (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL: VNNI's, and AVX2's one-row path) do not call it:
// they are faster without (docs/kernels.md "Prefetch"; since kKernelVersion 69-70), nor do VNNI's
// Q3_K / Q2_K and Q6_K tiles since their panels keep a block's rows in reading order
// (kKernelVersion 81, 83, 84), nor VNNI's Q4_K / Q5_K tile, which reads a block nearly in order
// (kKernelVersion 85). No #includes: include it inside the ISA file's anonymous namespace,
// after <immintrin.h> (internal linkage, so no definition is shared between files built for
// different ISAs).
#pragma once

// Where the lines go: into L2 (prefetcht1) for the decode tiles. On an AMD EPYC Zen 4
// (kKernelVersion 78) the 0.8B decode's layer calls went from 0.47-0.51 to 0.69-0.71 of a plain
// read for VNNI's Q2_K and Q3_K tiles and from 0.81 to 0.97 for Q6_K, and AVX2's Q4_K, Q5_K, Q6_K
// and IQ4_XS one-row paths gained alike; AVX2's Q2_K / Q3_K one-row path lost (0.81 to 0.64) and
// keeps L1, as the prefill repacks do (not measured). The likely cause: a prefetcht0 holds one of
// L1's few miss buffers until its line comes from memory, which caps the lines in flight; L2's
// queue is longer, and its latency the out-of-order core hides (docs/kernels.md "Prefetch").
constexpr int kToL1 = _MM_HINT_T0, kToL2 = _MM_HINT_T1;

// Part `step` of `steps` of the `bytes` at `from` into kTo (kToL1 or kToL2): a tile walking a k
// block in `steps` steps calls it once a step with `from` = the weights it reads next (the next
// k blocks of its panel, or the next panel's first ones: panels are contiguous). Reading past
// the weights is harmless for a prefetch.
template <int kTo>
ANCHORAGE_FORCE_INLINE void prefetch_part(const uint8_t* from, int bytes, int steps, int step) {
  const int lines = (bytes / 64 + steps - 1) / steps;
  for (int i = 0; i < lines; ++i)
    _mm_prefetch(reinterpret_cast<const char*>(from + 64 * (lines * step + i)), _mm_hint(kTo));
}

// The block loop of the SIMD GEMM kernels, written once and compiled into gemm_avx512.cc and
// gemm_avx2.cc. Include it inside the ISA file's anonymous namespace, after it defines:
//   constexpr int kMr;                     rows of the main register tile
//   int panels_for_rows(int rows);         panels a tile of `rows` rows takes at once (2^n)
//   template <typename T> TileFn<T> pick(int rows, int panels);  the register tile, for
//     rows <= kMr and panels a power of two up to panels_for_rows(rows)
// with TileFn<T> = void (*)(const float* x, int64_t ldx, const T* w, int64_t wstride,
//   int64_t kc, float* y, int64_t ldy, bool first, int64_t n_cols): y[0, rows) x the columns
//   of `panels` panels (w, w + wstride, ...) = (first ? +0.0f : y) + the FMA chain over
//   k in [0, kc), writing only the first n_cols columns.
// Only the order of tiles changes here, never an element's chain (gemm.h).
// (No #includes here: the file is included inside a namespace; the ISA file includes
// <cstdint> and kernels/gemm_job.h first.)
#pragma once

inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// One K block of a many-row block: row tiles outer, panels inner, so a tile's x slice stays
// in L1 while the block's weights stream past it from L2. (Panels outer with the x block in
// L2 measured 10-20% slower: eight x rows are eight streams, the weights one.)
template <typename T>
void run_k_block(const GemmJob& job, const GemmBlock& b, const T* w, int64_t k0, int64_t kc) {
  const bool first = k0 == 0 && !job.accumulate;
  for (int64_t m = b.m0; m < b.m1; m += kMr) {
    const TileFn<T> fn = pick<T>(int(min64(kMr, b.m1 - m)), 1);
    const float* x = job.x + m * job.ldx + k0;
    float* y = job.y + m * job.ldy;
    for (int64_t p = b.p0; p < b.p1; ++p) {
      fn(x, job.ldx, w + (p * job.K + k0) * 32, job.K * 32, kc, y + p * 32, job.ldy, first,
         job.N - p * 32);
    }
  }
}

template <typename T>
void run_block(const GemmJob& job, const T* w, const GemmBlock& b) {
  const int64_t rows = b.m1 - b.m0;
  if (rows <= kMr) {
    // One row tile reuses no weight: it walks K in one go and takes several panels at once
    // (decode, M = 1, streams 8 panels on AVX-512 to keep enough loads and FMAs in flight).
    const int pg = panels_for_rows(int(rows));
    for (int64_t p = b.p0; p < b.p1;) {
      int np = pg;
      while (np > b.p1 - p) np /= 2;
      pick<T>(int(rows), np)(job.x + b.m0 * job.ldx, job.ldx, w + p * job.K * 32, job.K * 32, job.K,
                             job.y + b.m0 * job.ldy + p * 32, job.ldy, !job.accumulate,
                             job.N - p * 32);
      p += np;
    }
    return;
  }
  for (int64_t k0 = 0; k0 < job.K; k0 += kGemmKc)
    run_k_block(job, b, w, k0, min64(kGemmKc, job.K - k0));
}

inline void gemm_block_impl(const GemmJob& job, const GemmBlock& b) {
  if (job.bf16) {
    run_block(job, static_cast<const uint16_t*>(job.panels), b);
  } else {
    run_block(job, static_cast<const float*>(job.panels), b);
  }
}

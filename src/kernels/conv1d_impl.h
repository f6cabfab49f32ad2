// Causal depthwise conv1d + SiLU over V16 (kernels/conv1d.h), compiled once per ISA inside its
// namespace by kernels/vector_kernels_*.cc; needs blocks_impl.h and exp_impl.h before it.
// Includes nothing.
//
// Per channel c and token t, with X = tail rows then x rows (X[m] = tail[m] for m < Kc-1,
// X[m] = x[m - (Kc-1)] after):
//   acc = +0;  acc = fma(w[j][c], X[t + j][c], acc) for j = 0 .. Kc-1;  y[t][c] = silu(acc)
// Vectorised along c (16 channels a block); each (t, c) is computed alone, so the bits do not
// depend on T, on where a call starts, or on the ISA.

constexpr int64_t kConvMaxTaps = 16;

// C channels from each pointer; tail's and w's rows are ldc apart (a channel range of a
// wider conv: conv1d.cc splits the channels over the threads).
inline void conv1d_silu_rows(const float* x, int64_t T, int64_t C, int64_t ldx, float* tail,
                             const float* w, int64_t ldc, int64_t Kc, float* y, int64_t ldy) {
  const int64_t nt = Kc - 1;  // tail rows
  const float* rows[kConvMaxTaps];
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < Kc; ++j) {
      const int64_t m = t + j;
      rows[j] = m < nt ? tail + m * ldc : x + (m - nt) * ldx;
    }
    float* yr = y + t * ldy;
    for_blocks(C, [&](int64_t c, int n) ANCHORAGE_LAMBDA_INLINE {
      V16 acc = V16::zero();
      for (int64_t j = 0; j < Kc; ++j)
        acc = V16::fma(load_n(w + j * ldc + c, n), load_n(rows[j] + c, n), acc);
      store_n(silu_v(acc), yr + c, n);
    });
  }
  // New tail: X[T + m] for m < Kc-1, in increasing m (the source T + m is never below m, so
  // an old tail row is read before it is overwritten).
  for (int64_t m = 0; m < nt; ++m) {
    const int64_t src = T + m;
    const float* from = src < nt ? tail + src * ldc : x + (src - nt) * ldx;
    float* to = tail + m * ldc;
    if (from == to) continue;
    for_blocks(C, [&](int64_t c, int n)
                      ANCHORAGE_LAMBDA_INLINE { store_n(load_n(from + c, n), to + c, n); });
  }
}

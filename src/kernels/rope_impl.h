// Partial NeoX rotation over V16 (kernels/rope.h), compiled once per ISA inside its namespace
// by kernels/vector_kernels_*.cc; needs blocks_impl.h before it. Includes nothing.
// For one token, each head x (width D) and i < R/2, with c = cos[i], s = sin[i]:
//   x'[i]       = (x[i] · c) - (x[i + R/2] · s)
//   x'[i + R/2] = (x[i + R/2] · c) + (x[i] · s)
// each product rounded, no fma (HF's q·cos + rotate_half(q)·sin in fp32 has these roundings).
// Dims R..D-1 are not touched.

inline void rope_rotate_token(float* x, int64_t n_heads, int64_t D, int64_t R, const float* cos,
                              const float* sin) {
  const int64_t half = R / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* lo = x + h * D;
    float* hi = lo + half;
    for_blocks(half, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
      const V16 a = load_n(lo + i, m);
      const V16 b = load_n(hi + i, m);
      const V16 c = load_n(cos + i, m);
      const V16 s = load_n(sin + i, m);
      store_n(a * c - b * s, lo + i, m);
      store_n(b * c + a * s, hi + i, m);
    });
  }
}

// Row norms over V16 (kernels/norm.h), compiled once per ISA inside its namespace by
// kernels/vector_kernels_*.cc; needs blocks_impl.h and exp_impl.h before it. Includes nothing.
//
// Fixed order, per row (or head) of width d:
//   ss  = Σ x[i]^2 in the canonical 16-lane order: lane l accumulates x[i]·x[i] for
//         i ≡ l (mod 16) as an fma chain in increasing i from +0 (the tail block is read with
//         load_partial, its missing lanes +0), then reduce_add folds lanes 8, 4, 2, 1.
//   rms norms:  inv = 1 / sqrt(ss / float(d) + eps);  y[i] = (x[i] · inv) · w[i]
//               (rmsnorm_1p: · (1 + w[i]); gated: then · silu(z[i]))
//   l2 norm:    inv = 1 / sqrt(ss + eps);             x[i] = (x[i] · inv) · scale
// Each row reads all of x before it writes y, and y[i] depends on x[i] only, so y may alias x.

inline float sum_squares(const float* x, int64_t d) {
  V16 acc = V16::zero();
  for_blocks(d, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
    const V16 v = load_n(x + i, m);
    acc = V16::fma(v, v, acc);
  });
  return acc.reduce_add();
}

template <bool kOnePlus>
inline void rmsnorm_rows(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w,
                         float eps, float* y, int64_t ldy) {
  const V16 one = V16::bcast(1.0f);
  for (int64_t t = 0; t < T; ++t) {
    const float* xr = x + t * ldx;
    float* yr = y + t * ldy;
    const V16 inv = V16::bcast(1.0f / __builtin_sqrtf(sum_squares(xr, d) / float(d) + eps));
    for_blocks(d, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
      V16 wv = load_n(w + i, m);
      if (kOnePlus) wv = one + wv;
      store_n((load_n(xr + i, m) * inv) * wv, yr + i, m);
    });
  }
}

inline void rmsnorm_any(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w,
                        bool one_plus, float eps, float* y, int64_t ldy) {
  if (one_plus) {
    rmsnorm_rows<true>(x, T, d, ldx, w, eps, y, ldy);
  } else {
    rmsnorm_rows<false>(x, T, d, ldx, w, eps, y, ldy);
  }
}

inline void l2norm_heads_rows(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx,
                              float eps, float scale) {
  const V16 vscale = V16::bcast(scale);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + t * ldx + h * d;
      const V16 inv = V16::bcast(1.0f / __builtin_sqrtf(sum_squares(xh, d) + eps));
      for_blocks(d, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
        store_n((load_n(xh + i, m) * inv) * vscale, xh + i, m);
      });
    }
  }
}

inline void gated_rmsnorm_rows(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                               int64_t n_heads, int64_t d, const float* w, float eps, float* y,
                               int64_t ldy) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      const float* oh = o + t * ldo + h * d;
      const float* zh = z + t * ldz + h * d;
      float* yh = y + t * ldy + h * d;
      const V16 inv = V16::bcast(1.0f / __builtin_sqrtf(sum_squares(oh, d) / float(d) + eps));
      for_blocks(d, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
        const V16 n = (load_n(oh + i, m) * inv) * load_n(w + i, m);
        store_n(n * silu_v(load_n(zh + i, m)), yh + i, m);
      });
    }
  }
}

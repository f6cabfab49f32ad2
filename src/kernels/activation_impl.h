// Element-wise activations over V16 (kernels/activation.h), compiled once per ISA inside its
// namespace by kernels/vector_kernels_*.cc; needs blocks_impl.h and exp_impl.h before it. Includes
// nothing. Every element is computed alone (no reduction), so the bits depend only on the inputs:
//   swiglu:      out = silu(gate) · up = (gate / (1 + exp(-gate))) · up
//   mul_sigmoid: x   = x · (1 / (1 + exp(-gate)))
//   add:         y   = x + r

inline void swiglu_n(const float* gate, const float* up, int64_t n, float* out) {
  for_blocks(n, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
    store_n(silu_v(load_n(gate + i, m)) * load_n(up + i, m), out + i, m);
  });
}

inline void mul_sigmoid_rows(float* x, int64_t ldx, const float* gate, int64_t ldg, int64_t T,
                             int64_t n) {
  for (int64_t t = 0; t < T; ++t) {
    float* xr = x + t * ldx;
    const float* gr = gate + t * ldg;
    for_blocks(n, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
      store_n(load_n(xr + i, m) * sigmoid_v(load_n(gr + i, m)), xr + i, m);
    });
  }
}

inline void add_n(const float* x, const float* r, int64_t n, float* y) {
  for_blocks(n, [&](int64_t i, int m) ANCHORAGE_LAMBDA_INLINE {
    store_n(load_n(x + i, m) + load_n(r + i, m), y + i, m);
  });
}

inline void exp_n(const float* x, int64_t n, float* y) {
  for_blocks(n, [&](int64_t i, int m)
                    ANCHORAGE_LAMBDA_INLINE { store_n(exp_v(load_n(x + i, m)), y + i, m); });
}

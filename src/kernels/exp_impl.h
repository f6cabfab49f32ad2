// The project's exp, sigmoid and silu, written once over a lane type V: V16 in the three ISA
// builds (kernels/vector_kernels_*.cc), Lane1 for the scalar functions of activation.h. The
// operation sequence is fixed and every step is an IEEE-exact lane operation, so the scalar
// function, the scalar V16 build, AVX2 and AVX-512 all give the same bits.
//
// exp(x), for x in [-87.3, 88.7]:
//   n  = round_to_nearest_even(x · log2(e))
//   r  = fma(n, -ln2_hi, x); r = fma(n, -ln2_lo, r)        Cody-Waite; ln2_hi = float(ln 2), so
//                                                         the first fma is exact (|r| < 1)
//   p  = Horner of Σ_{k<=7} r^k / k! (Taylor; coefficients rounded to f32), explicit fma,
//        highest coefficient first: p = c7; p = fma(p, r, c_k) for k = 6..0
//   y  = (p · 2^min(n,127)) · 2^(n - min(n,127))          2^n by exponent bits, split so that
//                                                         n = 128 (x near 88.7) stays finite
// then x > 88.7 gives +inf, x < -87.3 gives +0 (every result in range is a normal number) and
// NaN and +inf pass through. Error <= 1 ulp against exp in double (tests/kernels/exp_test.cc).
//
// sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x / (1 + exp(-x)) (one rounding fewer than
// x · sigmoid(x); pinned here because the bits are the contract).
//
// Include only inside a namespace that defines the lane type (after kernels/simd/v16.h or
// kernels/simd/lane1.h); this file includes only a macro header.

#include "kernels/simd/force_inline.h"

template <class V>
ANCHORAGE_FORCE_INLINE V exp_v(V x) {
  const V hi = V::bcast(88.7f);
  const V lo = V::bcast(-87.3f);
  const V inf = V::bcast(__builtin_inff());
  // min(NaN, hi) = hi: a NaN lane computes a finite value and is restored below.
  const V xc = V::max(V::min(x, hi), lo);
  const V n = V::round(xc * V::bcast(0x1.715476p+0f));  // log2(e)
  V r = V::fma(n, V::bcast(-0x1.62e430p-1f), xc);       // -ln2_hi
  r = V::fma(n, V::bcast(0x1.05c610p-29f), r);          // -ln2_lo
  V p = V::bcast(0x1.a01a02p-13f);                      // 1/7!
  p = V::fma(p, r, V::bcast(0x1.6c16c2p-10f));          // 1/6!
  p = V::fma(p, r, V::bcast(0x1.111112p-7f));           // 1/5!
  p = V::fma(p, r, V::bcast(0x1.555556p-5f));           // 1/4!
  p = V::fma(p, r, V::bcast(0x1.555556p-3f));           // 1/3!
  p = V::fma(p, r, V::bcast(0.5f));
  p = V::fma(p, r, V::bcast(1.0f));
  p = V::fma(p, r, V::bcast(1.0f));
  const V n1 = V::min(n, V::bcast(127.0f));
  V y = (p * V::pow2i(n1)) * V::pow2i(n - n1);
  y = V::select_lt(x, inf, y, x);              // NaN and +inf: x itself
  y = V::select_lt(hi, x, inf, y);             // x > 88.7
  y = V::select_lt(x, lo, V::bcast(0.0f), y);  // x < -87.3, -inf included
  return y;
}

template <class V>
ANCHORAGE_FORCE_INLINE V sigmoid_v(V x) {
  const V one = V::bcast(1.0f);
  return one / (one + exp_v(-x));
}

template <class V>
ANCHORAGE_FORCE_INLINE V silu_v(V x) {
  return x / (V::bcast(1.0f) + exp_v(-x));
}

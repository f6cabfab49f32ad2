// argmax over V16 (kernels/argmax.h), compiled once per ISA inside its namespace by
// kernels/vector_kernels_*.cc. Includes nothing.
//
// kArgmaxSets independent sets of 16 lanes (element 16 (kArgmaxSets b + s) + l goes to set s, lane
// l), so the compare-and-blend chain of one set does not bound the loop: each lane keeps its
// greatest value so far (strictly greater replaces, so the first of equals stays) and that value's
// index, as a float (exact below 2^24). Then the lanes and the tail past the last whole round are
// merged in scalar: greatest value, then smallest index. A NaN never replaces (select_lt is
// false).

// Sets of 16 lanes walked side by side: four on AVX-512 (32 zmm registers), two where a V16 is two
// ymm of 16 (four spilled there: 18 against 12 us for a 151,936-entry row, kernels_bench
// BM_argmax).
#if defined(ANCHORAGE_V16_AVX512)
constexpr int kArgmaxSets = 4;
#else
constexpr int kArgmaxSets = 2;
#endif

inline int64_t argmax_n(const float* x, int64_t n) {
  if (!(x[0] == x[0])) return 0;  // a NaN first: the sequential loop never moves off it
  float best_v = x[0];
  int64_t best = 0;
  const int64_t nv = n / (16 * kArgmaxSets) * (16 * kArgmaxSets);
  if (nv > 0) {
    alignas(64) static constexpr float kLane[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                    8, 9, 10, 11, 12, 13, 14, 15};
    const V16 step = V16::bcast(float(16 * kArgmaxSets));
    V16 acc[kArgmaxSets], idx[kArgmaxSets], at[kArgmaxSets];
#pragma GCC unroll 4
    for (int s = 0; s < kArgmaxSets; ++s) {
      acc[s] = V16::bcast(x[0]);
      idx[s] = V16::zero();
      at[s] = V16::load(kLane) + V16::bcast(float(16 * s));
    }
    for (int64_t i = 0; i < nv; i += 16 * kArgmaxSets) {
#pragma GCC unroll 4
      for (int s = 0; s < kArgmaxSets; ++s) {
        const V16 v = V16::load(x + i + 16 * s);
        idx[s] = V16::select_lt(acc[s], v, at[s], idx[s]);  // acc < v: v is greater
        acc[s] = V16::select_lt(acc[s], v, v, acc[s]);
        at[s] = at[s] + step;
      }
    }
    for (int s = 0; s < kArgmaxSets; ++s) {
      alignas(64) float av[16], ai[16];
      acc[s].store(av);
      idx[s].store(ai);
      for (int l = 0; l < 16; ++l) {
        const int64_t il = int64_t(ai[l]);
        if (av[l] > best_v || (av[l] == best_v && il < best)) {
          best_v = av[l];
          best = il;
        }
      }
    }
  }
  for (int64_t i = nv; i < n; ++i) {
    if (x[i] > best_v) {
      best_v = x[i];
      best = i;
    }
  }
  return best;
}

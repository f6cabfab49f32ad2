// Block walking over V16 shared by the *_impl.h bodies: a row of n floats is read as blocks of
// 16, the last one partial (load_partial fills the missing lanes with +0, store_partial writes
// only the n lanes). Included once per ISA inside its namespace, after kernels/simd/v16.h, by
// kernels/vector_kernels_*.cc. Includes only a macro header.

#include "kernels/simd/force_inline.h"

// Applies f(i, m) to the blocks [i, i + m) of [0, n); m = 16 except for the last block.
template <class F>
ANCHORAGE_FORCE_INLINE void for_blocks(int64_t n, F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) f(i, 16);
  if (i < n) f(i, int(n - i));
}

ANCHORAGE_FORCE_INLINE V16 load_n(const float* p, int m) {
  return m == 16 ? V16::load(p) : V16::load_partial(p, m);
}

ANCHORAGE_FORCE_INLINE void store_n(V16 v, float* p, int m) {
  if (m == 16) {
    v.store(p);
  } else {
    v.store_partial(p, m);
  }
}

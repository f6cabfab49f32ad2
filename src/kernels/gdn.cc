#include "kernels/gdn.h"

#include "kernels/activation.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

// §2.5: beta = sigmoid(b); g = A[h] · softplus(a + dt_bias[h]) (the sum rounded to fp32 first).
// Scalar: 2·n_v values a token, and softplus needs libm's log1p anyway.
void gdn_gates(const float* b, int64_t ldb, const float* a, int64_t lda, int64_t T, int64_t n_v,
               const float* A, const float* dt_bias, float* beta, float* g) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_v; ++h) {
      beta[t * n_v + h] = sigmoid(b[t * ldb + h]);
      g[t * n_v + h] = A[h] * softplus(a[t * lda + h] + dt_bias[h]);
    }
  }
}

// §2.7. One task per (value head, block of state columns); the columns of S never mix, so the
// split changes no bit. A task of several tokens takes 64 columns through all of them, so its
// 32 KiB of S stays in L1; a decode step (T = 1) keeps nothing between tokens and takes
// kGdnDecodeColumns, a whole row of a 128-wide head read as one run (gdn.h).
void gdn_recurrence(const GdnDims& dims, int64_t T, const float* q, int64_t ldq, const float* k,
                    int64_t ldk, const float* v, int64_t ldv, const float* beta, const float* g,
                    float* S, float* o, int64_t ldo, core::ThreadPool* pool) {
  const int64_t task_columns = T == 1 ? kGdnDecodeColumns : 64;
  const int64_t blocks = (dims.d_v + task_columns - 1) / task_columns;
  const VectorKernelTable& kt = vector_kernels();
  core::parallel_for(pool, dims.n_v * blocks, [&](int64_t task) {
    const int64_t h = task / blocks;
    const int64_t j0 = (task % blocks) * task_columns;
    const int64_t j1 = j0 + task_columns < dims.d_v ? j0 + task_columns : dims.d_v;
    kt.gdn_columns(dims, h, j0, j1, T, q, ldq, k, ldk, v, ldv, beta, g, S, o, ldo);
  });
}

}  // namespace anchorage::kernels

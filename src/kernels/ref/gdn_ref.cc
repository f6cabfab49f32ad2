#include "kernels/ref/gdn_ref.h"

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/ref/activation_ref.h"

namespace anchorage::kernels {

void gdn_gates_ref(const float* b, int64_t ldb, const float* a, int64_t lda, int64_t T, int64_t n_v,
                   const float* A, const float* dt_bias, double* beta, double* g) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_v; ++h) {
      beta[t * n_v + h] = sigmoid_ref(b[t * ldb + h]);
      g[t * n_v + h] = double(A[h]) * softplus_ref(double(a[t * lda + h]) + double(dt_bias[h]));
    }
  }
}

void gdn_recurrence_ref(const GdnDims& dims, int64_t T, const double* q, int64_t ldq,
                        const double* k, int64_t ldk, const double* v, int64_t ldv,
                        const double* beta, const double* g, double* S, double* o, int64_t ldo) {
  const int64_t dk = dims.d_k;
  const int64_t dv = dims.d_v;
  std::vector<double> delta(static_cast<size_t>(dv));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < dims.n_v; ++h) {
      const int64_t kh = dims.key_head(h);
      const double* kt = k + t * ldk + kh * dk;
      const double* qt = q + t * ldq + kh * dk;
      const double* vt = v + t * ldv + h * dv;
      const double alpha = std::exp(g[t * dims.n_v + h]);
      const double b = beta[t * dims.n_v + h];
      double* Sh = S + h * dk * dv;
      for (int64_t e = 0; e < dk * dv; ++e) Sh[e] *= alpha;  // decay first
      for (int64_t j = 0; j < dv; ++j) {
        double s = 0.0;
        for (int64_t i = 0; i < dk; ++i) s += Sh[i * dv + j] * kt[i];
        // s is the prediction m[j], from the decayed state
        delta[size_t(j)] = b * (vt[j] - s);
      }
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t j = 0; j < dv; ++j) Sh[i * dv + j] += kt[i] * delta[size_t(j)];
      }
      for (int64_t j = 0; j < dv; ++j) {
        double s = 0.0;
        for (int64_t i = 0; i < dk; ++i) s += Sh[i * dv + j] * qt[i];  // after the update
        o[t * ldo + h * dv + j] = s;
      }
    }
  }
}

}  // namespace anchorage::kernels

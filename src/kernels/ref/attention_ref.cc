#include "kernels/ref/attention_ref.h"

#include <cmath>
#include <vector>

#include "core/check.h"

namespace anchorage::kernels {

float kv_at(const AttentionDims& dims, const void* cache, bool is_k, int64_t j, int64_t d,
            int64_t t) {
  const int64_t idx = is_k ? (j * dims.D + d) * dims.capacity + t   // K: [n_kv][D][capacity]
                           : (j * dims.capacity + t) * dims.D + d;  // V: [n_kv][capacity][D]
  if (dims.kv_dtype == core::DType::kBF16) {
    return core::bf16_to_f32(static_cast<const uint16_t*>(cache)[idx]);
  }
  return static_cast<const float*>(cache)[idx];
}

void attention_ref(const AttentionDims& dims, const float* q, int64_t ldq, int64_t T, int64_t pos0,
                   const void* K, const void* V, float* out, int64_t ldo, core::ThreadPool*) {
  ANCHORAGE_CHECK(dims.n_q % dims.n_kv == 0 && pos0 + T <= dims.capacity);
  const int64_t D = dims.D, group = dims.n_q / dims.n_kv;
  std::vector<double> s, o(size_t(D), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t pos = pos0 + t;
    s.assign(size_t(pos + 1), 0.0);
    for (int64_t h = 0; h < dims.n_q; ++h) {
      const int64_t j = h / group;
      const float* qh = q + t * ldq + h * D;
      double mx = -INFINITY;
      for (int64_t u = 0; u <= pos; ++u) {
        double acc = 0.0;
        for (int64_t d = 0; d < D; ++d) acc += double(qh[d]) * kv_at(dims, K, true, j, d, u);
        s[size_t(u)] = acc / std::sqrt(double(D));
        mx = std::fmax(mx, s[size_t(u)]);
      }
      double sum = 0.0;
      for (int64_t u = 0; u <= pos; ++u) {
        s[size_t(u)] = std::exp(s[size_t(u)] - mx);
        sum += s[size_t(u)];
      }
      o.assign(size_t(D), 0.0);
      for (int64_t u = 0; u <= pos; ++u) {
        for (int64_t d = 0; d < D; ++d)
          o[size_t(d)] += s[size_t(u)] * kv_at(dims, V, false, j, d, u);
      }
      for (int64_t d = 0; d < D; ++d) out[t * ldo + h * D + d] = float(o[size_t(d)] / sum);
    }
  }
}

}  // namespace anchorage::kernels

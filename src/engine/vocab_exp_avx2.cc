// vocab_exp_sum's passes built with AVX2 (CMakeLists.txt gives this file the AVX2 flags and -O3):
// the SSE2 build converted and added two doubles an instruction, a third of a temperature
// draw's time over a 151,936-entry vocabulary.
#include "engine/vocab_exp_impl.h"

namespace anchorage::engine::vocab_detail {

void scale_avx2(const float* x, size_t m, float max_logit, float inv_t, float* w) {
  scale_any(x, m, max_logit, inv_t, w);
}

void add_lanes_avx2(const float* w, size_t m, double* sums) {
  add_lanes_any(w, m, sums);
}

void counts_at_least_avx2(const float* x, size_t n, const float* t, int64_t* counts) {
  counts_at_least_any(x, n, t, counts);
}

}  // namespace anchorage::engine::vocab_detail

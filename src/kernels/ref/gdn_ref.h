// gdn_ref: the definitions of kernels::gdn_gates and kernels::gdn_recurrence
// (docs/model.md §2.5, §2.7) as plain loops in double, the state held in double between
// tokens (the fp64 reference of the spec's invariant §7.1). Same layouts as the kernels (gdn.h).
// For tests only. Pure; any thread.
#pragma once

#include <cstdint>

#include "kernels/gdn.h"

namespace anchorage::kernels {

void gdn_gates_ref(const float* b, int64_t ldb, const float* a, int64_t lda, int64_t T, int64_t n_v,
                   const float* A, const float* dt_bias, double* beta, double* g);

// q, k, v, beta, g, S, o as in gdn_recurrence, all double; S updated in place.
void gdn_recurrence_ref(const GdnDims& dims, int64_t T, const double* q, int64_t ldq,
                        const double* k, int64_t ldk, const double* v, int64_t ldv,
                        const double* beta, const double* g, double* S, double* o, int64_t ldo);

}  // namespace anchorage::kernels

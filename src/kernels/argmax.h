// argmax: the index of the first maximum of a row of floats, the greedy sampler's choice
// (engine/sampler.h). The answer is the sequential loop's,
//
//     best = 0; for i in 1 .. n-1: if x[i] > x[best]: best = i
//
// in every ISA: a NaN never wins (its comparisons are false), a NaN at x[0] is kept (nothing
// compares greater than it), +0 and -0 tie (the first wins). The vector builds keep each lane's
// strictly greater values with their indices and pick, across lanes, the greatest value and then
// the smallest index, which is that loop's answer whatever the lanes' split.
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// n >= 1 and n < 2^24 (the vector builds carry indices in f32 lanes, exact below 2^24).
int64_t argmax(const float* x, int64_t n);

}  // namespace anchorage::kernels

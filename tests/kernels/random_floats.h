// Normal-distributed test inputs from a fixed seed, shared by the GEMM tests.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace anchorage::kernels {

inline std::vector<float> random_floats(int64_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& f : v) f = float(rng.normal());
  return v;
}

}  // namespace anchorage::kernels

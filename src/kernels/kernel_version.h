// kKernelVersion: the version of the arithmetic that computes the rows caches keep. It enters
// every model's manifest() and so the cache fingerprint (cache/fingerprint.h): rows written by
// other arithmetic are not what a cold prefill writes now, and must be swept.
//
// Bump it in the change that edits any source listed in tests/golden/kernel_sources.txt
// (src/kernels/, src/model/, core/dtype and core/rng: the kernels, the forward, weight packing
// and random init), then regenerate that file with scripts/kernel_sources.sh.
// tests/kernels/kernel_version_test.cc fails when a listed source changed and this did not.
#pragma once

namespace anchorage::kernels {

inline constexpr int kKernelVersion = 87;

}  // namespace anchorage::kernels

// A minimal .npy (NumPy format version 1.0) writer for the NumPy reference checks
// (tests/model/numpy_ref/): little-endian f4, f8 and i4 arrays, C order. Writes through
// stdio, which is fine for test output (the core::Fs seam is for the caches' files).
// Stateless functions; safe from any thread for distinct paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace anchorage::test {

core::Status write_npy(const std::string& path, const float* data,
                       const std::vector<int64_t>& shape);
core::Status write_npy(const std::string& path, const double* data,
                       const std::vector<int64_t>& shape);
core::Status write_npy(const std::string& path, const int32_t* data,
                       const std::vector<int64_t>& shape);

}  // namespace anchorage::test

// PackedWeight: a linear layer's weight W [N out][K in] (PyTorch order, y = W x), stored in
// column panels for the GEMM: panel p holds output rows [kPanel*p, kPanel*p + kPanel) as
// [K][kPanel] (k-major), rows past N zero-filled. Storage is f32 or bf16; bf16 panels are
// widened to f32 as the GEMM packs them, so activations keep f32 precision.
// Immutable after construction; safe to share between threads.
#pragma once

#include <cstdint>

#include "core/aligned_buffer.h"
#include "core/dtype.h"

namespace anchorage::kernels {

class PackedWeight {
 public:
  static constexpr int64_t kPanel = 32;  // output rows per panel (two AVX-512 vectors)

  PackedWeight() = default;
  // w: [n][k] row-major f32; stored as dtype (f32 or bf16, rounded to nearest even).
  PackedWeight(const float* w, int64_t n, int64_t k, core::DType dtype);

  int64_t rows() const { return n_; }  // N, outputs
  int64_t cols() const { return k_; }  // K, inputs
  core::DType dtype() const { return dtype_; }
  int64_t n_panels() const { return (n_ + kPanel - 1) / kPanel; }
  int64_t storage_bytes() const { return int64_t(data_.size()); }
  // Panel p: [K][kPanel] elements of dtype().
  const void* panel(int64_t p) const {
    return static_cast<const uint8_t*>(data_.data()) + p * k_ * kPanel * core::dtype_size(dtype_);
  }
  // W[row][0..K) as f32 (exact for either dtype). Used for embedding lookups.
  void get_row(int64_t row, float* out) const;
  // The stored value of W[row][col] as f32 (what the GEMM multiplies with).
  float at(int64_t row, int64_t col) const;

 private:
  int64_t n_ = 0;
  int64_t k_ = 0;
  core::DType dtype_ = core::DType::kF32;
  core::AlignedBuffer data_;
};

}  // namespace anchorage::kernels

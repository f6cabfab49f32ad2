#include "kernels/packed_weight.h"

#include "core/check.h"

namespace anchorage::kernels {

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k, core::DType dtype)
    : n_(n), k_(k), dtype_(dtype) {
  ANCHORAGE_CHECK(n > 0 && k > 0);
  ANCHORAGE_CHECK(dtype == core::DType::kF32 || dtype == core::DType::kBF16);
  const int64_t panels = n_panels();
  data_ = core::AlignedBuffer(size_t(panels * k * kPanel * core::dtype_size(dtype)));
  for (int64_t row = 0; row < n; ++row) {
    const int64_t p = row / kPanel, lane = row % kPanel;
    for (int64_t col = 0; col < k; ++col) {
      const int64_t at = (p * k + col) * kPanel + lane;
      const float v = w[row * k + col];
      if (dtype == core::DType::kF32) {
        data_.as<float>()[at] = v;
      } else {
        data_.as<uint16_t>()[at] = core::f32_to_bf16(v);
      }
    }
  }
}

float PackedWeight::at(int64_t row, int64_t col) const {
  const int64_t p = row / kPanel, lane = row % kPanel;
  const int64_t idx = (p * k_ + col) * kPanel + lane;
  if (dtype_ == core::DType::kF32) return data_.as<float>()[idx];
  return core::bf16_to_f32(data_.as<uint16_t>()[idx]);
}

void PackedWeight::get_row(int64_t row, float* out) const {
  for (int64_t col = 0; col < k_; ++col) out[col] = at(row, col);
}

}  // namespace anchorage::kernels

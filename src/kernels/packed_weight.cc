#include "kernels/packed_weight.h"

#include "core/check.h"

namespace anchorage::kernels {

namespace {

// Packs one panel (rows [row0, row0 + rows) of w) into out [k][kPanel], converting each value
// with `store`. Columns go in blocks of 16 (one source cache line a row) so the 32 source rows
// and the 16 destination lines of a block all stay in L1: packing an LM head is memory-bound
// instead of bound on strided misses.
template <typename T, typename Store>
void pack_panel(const float* w, int64_t row0, int64_t rows, int64_t k, T* out, Store store) {
  constexpr int64_t kColBlock = 16;
  for (int64_t c0 = 0; c0 < k; c0 += kColBlock) {
    const int64_t c1 = c0 + kColBlock < k ? c0 + kColBlock : k;
    for (int64_t lane = 0; lane < rows; ++lane) {
      const float* src = w + (row0 + lane) * k;
      for (int64_t col = c0; col < c1; ++col)
        out[col * PackedWeight::kPanel + lane] = store(src[col]);
    }
  }
}

}  // namespace

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k, core::DType dtype)
    : n_(n), k_(k), dtype_(dtype) {
  ANCHORAGE_CHECK(n > 0 && k > 0);
  ANCHORAGE_CHECK(dtype == core::DType::kF32 || dtype == core::DType::kBF16);
  const int64_t panels = n_panels();
  // Zero-filled, so the lanes of the last panel past n stay 0.
  data_ = core::AlignedBuffer(size_t(panels * k * kPanel * core::dtype_size(dtype)));
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t row0 = p * kPanel;
    const int64_t rows = n - row0 < kPanel ? n - row0 : kPanel;
    if (dtype == core::DType::kF32) {
      pack_panel(w, row0, rows, k, data_.as<float>() + p * k * kPanel, [](float v) { return v; });
    } else {
      pack_panel(w, row0, rows, k, data_.as<uint16_t>() + p * k * kPanel,
                 [](float v) { return core::f32_to_bf16(v); });
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

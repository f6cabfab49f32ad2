// PackedWeight: packing plain and quantized rows into panels, and reading them back.
#include "kernels/packed_weight.h"

#include <cstring>
#include <vector>

#include "core/check.h"
#include "core/isa.h"
#include "kernels/gemm_job.h"
#include "kernels/quant.h"

namespace anchorage::kernels {

namespace {

using core::DType;

uint16_t load_u16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// Packs plain rows into panels: out is [panels][k][kPanel] of T, value (row, col) =
// store(read(row, col)). Columns go in blocks of 16 (one source cache line a row) so the 32
// source rows and the 16 destination lines of a block all stay in L1: packing an LM head is
// memory-bound instead of bound on strided misses.
template <typename T, typename Read, typename Store>
void pack_plain(int64_t n, int64_t k, T* out, Read read, Store store) {
  constexpr int64_t kColBlock = 16;
  const int64_t panels = (n + PackedWeight::kPanel - 1) / PackedWeight::kPanel;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t row0 = p * PackedWeight::kPanel;
    const int64_t rows = n - row0 < PackedWeight::kPanel ? n - row0 : PackedWeight::kPanel;
    T* po = out + p * k * PackedWeight::kPanel;
    for (int64_t c0 = 0; c0 < k; c0 += kColBlock) {
      const int64_t c1 = c0 + kColBlock < k ? c0 + kColBlock : k;
      for (int64_t lane = 0; lane < rows; ++lane) {
        for (int64_t col = c0; col < c1; ++col)
          po[col * PackedWeight::kPanel + lane] = store(read(row0 + lane, col));
      }
    }
  }
}

template <typename Read>
void pack_plain_as(DType storage, int64_t n, int64_t k, void* out, Read read) {
  switch (storage) {
    case DType::kF32:
      return pack_plain(n, k, static_cast<float*>(out), read, [](float v) { return v; });
    case DType::kBF16:
      return pack_plain(n, k, static_cast<uint16_t*>(out), read,
                        [](float v) { return core::f32_to_bf16(v); });
    case DType::kF16:
      return pack_plain(n, k, static_cast<uint16_t*>(out), read,
                        [](float v) { return core::f32_to_f16(v); });
    default:
      ANCHORAGE_CHECK_MSG(false, "pack_plain_as: not a plain type");
  }
}

// Plain rows of src_type as a (row, col) -> f32 reader; 16-bit rows stored as they come are
// moved as bits (an f16 file's 250 MB went through two scalar conversions per weight at load:
// 1.3 s of a 1.3 s start-up on `small`; the round trip is the identity on every value but a
// signalling NaN, which the conversion quieted).
void pack_plain_rows(const void* rows, DType src, DType storage, int64_t n, int64_t k, void* out) {
  if (src == storage && (src == DType::kF16 || src == DType::kBF16)) {
    const uint16_t* s = static_cast<const uint16_t*>(rows);
    return pack_plain(
        n, k, static_cast<uint16_t*>(out), [=](int64_t r, int64_t c) { return s[r * k + c]; },
        [](uint16_t v) { return v; });
  }
  switch (src) {
    case DType::kF32: {
      const float* s = static_cast<const float*>(rows);
      return pack_plain_as(storage, n, k, out, [=](int64_t r, int64_t c) { return s[r * k + c]; });
    }
    case DType::kBF16: {
      const uint16_t* s = static_cast<const uint16_t*>(rows);
      return pack_plain_as(storage, n, k, out,
                           [=](int64_t r, int64_t c) { return core::bf16_to_f32(s[r * k + c]); });
    }
    case DType::kF16: {
      const uint16_t* s = static_cast<const uint16_t*>(rows);
      return pack_plain_as(storage, n, k, out,
                           [=](int64_t r, int64_t c) { return core::f16_to_f32(s[r * k + c]); });
    }
    default:
      ANCHORAGE_CHECK_MSG(false, "pack_plain_rows: not a plain type");
  }
}

}  // namespace

PackedWeight::PackedWeight(int64_t n, int64_t k, DType dtype) : n_(n), k_(k), dtype_(dtype) {
  ANCHORAGE_CHECK(n > 0 && k > 0);
  ANCHORAGE_CHECK_MSG(k % core::dtype_block_elements(dtype) == 0,
                      "K must be a multiple of the quantization block");
  // Zero-filled, so the lanes of the last panel past n stay 0 (all-zero blocks decode to 0).
  data_ = core::AlignedBuffer(size_t(n_panels() * panel_bytes()));
}

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k, DType dtype)
    : PackedWeight(n, k, dtype) {
  if (!core::dtype_is_quantized(dtype)) {
    pack_plain_rows(w, DType::kF32, dtype, n, k, data_.data());
    return;
  }
  std::vector<uint8_t> row(size_t(core::dtype_row_bytes(dtype, k)));
  for (int64_t r = 0; r < n; ++r) {
    quantize_row(dtype, w + r * k, row.data(), k);
    put_row(r, row.data(), dtype);
  }
}

PackedWeight PackedWeight::from_rows(const void* rows, DType src_type, int64_t n, int64_t k,
                                     DType storage) {
  PackedWeight w(n, k, storage);
  if (core::dtype_is_quantized(src_type) || core::dtype_is_quantized(storage)) {
    ANCHORAGE_CHECK_MSG(src_type == storage, "quantized weights are stored as they come");
    const int64_t row_bytes = core::dtype_row_bytes(src_type, k);
    for (int64_t r = 0; r < n; ++r)
      w.put_row(r, static_cast<const uint8_t*>(rows) + r * row_bytes, src_type);
    return w;
  }
  pack_plain_rows(rows, src_type, storage, n, k, w.data_.data());
  return w;
}

// Quantized: k block kb of panel p holds the kb-th blocks of rows 32p .. 32p+31, byte b of
// lane l's block at kb_base + b * 32 + l.
void PackedWeight::put_row(int64_t row, const void* src, DType src_type) {
  ANCHORAGE_CHECK(src_type == dtype_ && core::dtype_is_quantized(dtype_));
  const int64_t be = core::dtype_block_elements(dtype_), bb = core::dtype_block_bytes(dtype_);
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* base = static_cast<uint8_t*>(data_.data()) + (row / kPanel) * panel_bytes();
  const int64_t lane = row % kPanel;
  for (int64_t kb = 0; kb < k_ / be; ++kb) {
    uint8_t* dst = base + kb * kPanel * bb + lane;
    for (int64_t b = 0; b < bb; ++b) dst[b * kPanel] = s[kb * bb + b];
  }
}

void PackedWeight::block_of(int64_t row, int64_t kb, uint8_t* out) const {
  const int64_t bb = core::dtype_block_bytes(dtype_);
  const uint8_t* src =
      static_cast<const uint8_t*>(panel(row / kPanel)) + kb * kPanel * bb + row % kPanel;
  for (int64_t b = 0; b < bb; ++b) out[b] = src[b * kPanel];
}

const uint8_t* PackedWeight::element(int64_t row, int64_t col) const {
  const int64_t size = core::dtype_size(dtype_);
  return static_cast<const uint8_t*>(panel(row / kPanel)) + (col * kPanel + row % kPanel) * size;
}

float PackedWeight::at(int64_t row, int64_t col) const {
  switch (dtype_) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, element(row, col), 4);
      return v;
    }
    case DType::kBF16:
      return core::bf16_to_f32(load_u16(element(row, col)));
    case DType::kF16:
      return core::f16_to_f32(load_u16(element(row, col)));
    default: {
      const int64_t be = core::dtype_block_elements(dtype_);
      uint8_t block[256];
      float values[256];
      block_of(row, col / be, block);
      dequantize_row(dtype_, block, values, be);
      return values[col % be];
    }
  }
}

void PackedWeight::unpack_panel(int64_t p, int64_t k0, int64_t kc, float* out) const {
  const uint8_t* base = static_cast<const uint8_t*>(panel(p));
  const core::Isa isa = core::active_isa();
  switch (dtype_) {
    case DType::kF32:
      std::memcpy(out, base + k0 * kPanel * 4, size_t(kc * kPanel) * 4);
      return;
    case DType::kBF16:
      // Elements k-major: the panel's [k0, k0 + kc) x 32 values are one run.
      dequantize_row(dtype_, base + k0 * kPanel * 2, out, kc * kPanel);
      return;
    case DType::kF16: {
      const uint16_t* h = reinterpret_cast<const uint16_t*>(base) + k0 * kPanel;
      if (isa == core::Isa::kAvx512) return isa_avx512::unpack_f16(h, kc * kPanel, out);
      if (isa == core::Isa::kAvx2) return isa_avx2::unpack_f16(h, kc * kPanel, out);
      return isa_scalar::unpack_f16(h, kc * kPanel, out);
    }
    default:
      break;
  }
  const int64_t be = core::dtype_block_elements(dtype_), bb = core::dtype_block_bytes(dtype_);
  ANCHORAGE_CHECK(k0 % be == 0 && kc % be == 0);
  const uint8_t* blocks = base + (k0 / be) * kPanel * bb;
  const int t = int(dtype_);
  if (isa == core::Isa::kAvx512) return isa_avx512::unpack_kblocks(t, blocks, kc / be, out);
  if (isa == core::Isa::kAvx2) return isa_avx2::unpack_kblocks(t, blocks, kc / be, out);
  isa_scalar::unpack_kblocks(t, blocks, kc / be, out);
}

void PackedWeight::get_row(int64_t row, float* out) const {
  if (!core::dtype_is_quantized(dtype_)) {
    for (int64_t col = 0; col < k_; ++col) out[col] = at(row, col);
    return;
  }
  const int64_t be = core::dtype_block_elements(dtype_);
  uint8_t block[256];
  for (int64_t kb = 0; kb < k_ / be; ++kb) {
    block_of(row, kb, block);
    dequantize_row(dtype_, block, out + kb * be, be);
  }
}

}  // namespace anchorage::kernels

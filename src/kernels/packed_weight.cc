// PackedWeight: packing plain and quantized rows into panels, and reading them back.
#include "kernels/packed_weight.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "core/isa.h"
#include "kernels/gemm_job.h"
#include "kernels/panel_layout.h"
#include "kernels/q3_k_codes.h"
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

// 16 rows of 16 bytes to 16 columns: r[i] byte j -> r[j] byte i. Each round interleaves rows i
// and i + 8 byte by byte, which rotates the 8 bits (row, byte) of an element's place left by
// one; four rounds swap row and byte. SSE2, so every x86-64 build has it.
inline void transpose16x16(__m128i r[16]) {
#pragma GCC unroll 4
  for (int round = 0; round < 4; ++round) {
    __m128i t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
}

// The quad run of one k block, written byte-interleaved, re-ordered in place into quads
// (kernels/panel_layout.h): each quad's 4 byte rows of 32 lanes ([t][l]) become the lanes' 4
// bytes side by side ([l][t]), by byte and then 16-bit interleaves.
inline void quads_in_place(uint8_t* blk, const PanelLayout& layout) {
  for (int q = layout.quad_begin; q < layout.quad_end; q += 4) {
    uint8_t* p = blk + q * 32;
    __m128i r[8];  // row t, lanes 16h .. 16h + 15 at r[2t + h]
    for (int i = 0; i < 8; ++i)
      r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    for (int h = 0; h < 2; ++h) {
      const __m128i a = _mm_unpacklo_epi8(r[h], r[2 + h]);      // lanes 0-7: (t0, t1)
      const __m128i b = _mm_unpackhi_epi8(r[h], r[2 + h]);      // lanes 8-15
      const __m128i c = _mm_unpacklo_epi8(r[4 + h], r[6 + h]);  // lanes 0-7: (t2, t3)
      const __m128i d = _mm_unpackhi_epi8(r[4 + h], r[6 + h]);
      const __m128i out[4] = {_mm_unpacklo_epi16(a, c), _mm_unpackhi_epi16(a, c),
                              _mm_unpacklo_epi16(b, d), _mm_unpackhi_epi16(b, d)};
      for (int i = 0; i < 4; ++i)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 64 * h + 16 * i), out[i]);
    }
  }
}

// A Q3_K k block, written byte-interleaved: its hmask and qs rows (bytes 0-95 of each lane's
// block) become the panel's three code bytes per input slot (kernels/q3_k_codes.h), in place
// (slot i reads and writes rows i, 32 + i and 64 + i only).
inline void q3_k_codes_in_place(uint8_t* blk) {
  // n bits of each byte from bit `from` to bit `to`, the rest zero (a 16-bit shift is exact
  // here: every bit kept comes from its own byte).
  const auto move = [](__m128i x, int from, int to, int n) {
    const __m128i s = to >= from ? _mm_slli_epi16(x, to - from) : _mm_srli_epi16(x, from - to);
    return _mm_and_si128(s, _mm_set1_epi8(char(((1 << n) - 1) << to)));
  };
  for (int i = 0; i < 32; ++i) {
    for (int half = 0; half < 2; ++half) {
      auto* pa = reinterpret_cast<__m128i*>(blk + i * 32 + 16 * half);
      auto* pb = reinterpret_cast<__m128i*>(blk + (32 + i) * 32 + 16 * half);
      auto* pc = reinterpret_cast<__m128i*>(blk + (64 + i) * 32 + 16 * half);
      const __m128i hm = _mm_loadu_si128(pa), q0 = _mm_loadu_si128(pb), q1 = _mm_loadu_si128(pc);
      // A: code(0,0), code(0,1), the low pair of code(0,2); B the same for h = 1.
      const __m128i a =
          _mm_or_si128(_mm_or_si128(_mm_or_si128(move(q0, 0, 0, 2), move(hm, 0, 2, 1)),
                                    _mm_or_si128(move(q0, 2, 3, 2), move(hm, 1, 5, 1))),
                       move(q0, 4, 6, 2));
      const __m128i b =
          _mm_or_si128(_mm_or_si128(_mm_or_si128(move(q1, 0, 0, 2), move(hm, 4, 2, 1)),
                                    _mm_or_si128(move(q1, 2, 3, 2), move(hm, 5, 5, 1))),
                       move(q1, 4, 6, 2));
      // C: code(0,3), code(1,3), the high bits of code(0,2) and code(1,2).
      const __m128i c =
          _mm_or_si128(_mm_or_si128(_mm_or_si128(move(q0, 6, 0, 2), move(hm, 3, 2, 1)),
                                    _mm_or_si128(move(q1, 6, 3, 2), move(hm, 7, 5, 1))),
                       _mm_or_si128(move(hm, 2, 6, 1), move(hm, 6, 7, 1)));
      _mm_storeu_si128(pa, a);
      _mm_storeu_si128(pb, b);
      _mm_storeu_si128(pc, c);
    }
  }
}

// One k block of bb-byte blocks, its rows in GGUF's order, moved to the rows the layout keeps
// them at (PanelLayout::row: Q3_K's, Q2_K's and Q6_K's reading order; every other type's rows
// stay).
inline void rows_in_place(uint8_t* blk, const PanelLayout& layout, int64_t bb) {
  if (layout.rows == PanelLayout::Rows::kGguf) return;
  alignas(64) uint8_t was[210 * PanelLayout::kLanes];  // Q6_K's k block, the largest
  ANCHORAGE_CHECK(bb * PanelLayout::kLanes <= int64_t(sizeof(was)));
  std::memcpy(was, blk, size_t(bb * PanelLayout::kLanes));
  for (int b = 0; b < int(bb); ++b)
    std::memcpy(blk + layout.row(b) * PanelLayout::kLanes, was + b * PanelLayout::kLanes,
                PanelLayout::kLanes);
}

// Quantized rows (row_bytes apart, blocks of type's bytes) into panels (the layout of kernels/
// panel_layout.h): panel p's k block kb gets byte b of lane l's block at layout.offset(b, l).
// Lanes past n are written as zero bytes (an all-zero block decodes to 0). A panel's block is
// moved 16 lanes by 16 bytes at a time through transpose16x16 (a byte-at-a-time scatter took a
// quarter of start-up on the 0.8B shape: docs/performance.md "Start-up"), then its quad run is
// re-ordered in place while it is in L1 (and Q3_K's codes re-cut, Q3_K's, Q2_K's and Q6_K's rows
// put in order).
void pack_quantized(const uint8_t* rows, int64_t n, int64_t row_bytes, DType type, uint8_t* out) {
  const int64_t bb = core::dtype_block_bytes(type);
  const PanelLayout layout = panel_layout(type);
  constexpr int64_t kPanel = PackedWeight::kPanel;
  static_assert(kPanel == PanelLayout::kLanes);
  ANCHORAGE_CHECK((layout.quad_end - layout.quad_begin) % 4 == 0 && layout.quad_end <= bb);
  const int64_t blocks = row_bytes / bb;
  for (int64_t p = 0; p * kPanel < n; ++p) {
    uint8_t* panel = out + p * kPanel * row_bytes;
    for (int64_t kb = 0; kb < blocks; ++kb) {
      uint8_t* dst = panel + kb * kPanel * bb;
      for (int64_t g = 0; g < kPanel; g += 16) {
        for (int64_t b0 = 0; b0 < bb; b0 += 16) {
          const int64_t nb = std::min<int64_t>(16, bb - b0);
          __m128i r[16];
          for (int64_t i = 0; i < 16; ++i) {
            const int64_t row = p * kPanel + g + i;
            if (row >= n) {
              r[i] = _mm_setzero_si128();
              continue;
            }
            const uint8_t* src = rows + row * row_bytes + kb * bb + b0;
            if (nb == 16) {
              r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
            } else {  // a block's last bytes: never read past the row
              alignas(16) uint8_t tail[16] = {};
              std::memcpy(tail, src, size_t(nb));
              r[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
            }
          }
          transpose16x16(r);
          for (int64_t j = 0; j < nb; ++j)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (b0 + j) * kPanel + g), r[j]);
        }
      }
      if (type == DType::kQ3_K) q3_k_codes_in_place(dst);
      quads_in_place(dst, layout);
      rows_in_place(dst, layout, bb);
    }
  }
}

}  // namespace

PackedWeight::PackedWeight(int64_t n, int64_t k, DType dtype, const Arena& arena)
    : n_(n), k_(k), dtype_(dtype) {
  ANCHORAGE_CHECK(n > 0 && k > 0);
  ANCHORAGE_CHECK_MSG(k % core::dtype_block_elements(dtype) == 0,
                      "K must be a multiple of the quantization block");
  data_ = allocate(arena);
}

std::shared_ptr<uint8_t> PackedWeight::allocate(const Arena& arena) const {
  // Not zero-filled: every byte is written by the packing (fresh memory is costly to touch
  // twice: docs/performance.md "Start-up"), but a plain type's last panel, whose lanes past n
  // the packing skips and the GEMM reads as 0.
  const size_t bytes = size_t(storage_bytes());
  std::shared_ptr<uint8_t> data;
  if (arena) {
    data = std::shared_ptr<uint8_t>(arena, arena->allocate(bytes));  // shares the arena's count
  } else {
    auto own = std::make_shared<core::AlignedBuffer>(
        bytes, core::AlignedBuffer::Pages::kHugeWhenLarge, core::AlignedBuffer::Fill::kNone);
    data = std::shared_ptr<uint8_t>(own, own->as<uint8_t>());
  }
  if (n_ % kPanel != 0 && !core::dtype_is_quantized(dtype_))
    std::memset(data.get() + (n_panels() - 1) * panel_bytes(), 0, size_t(panel_bytes()));
  return data;
}

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k, DType dtype, const Arena& arena)
    : PackedWeight(n, k, dtype, arena) {
  pack_f32(w, 0, n);
}

void PackedWeight::pack_f32(const float* w, int64_t r0, int64_t n) {
  uint8_t* dst = data_.get() + (r0 / kPanel) * panel_bytes();
  if (!core::dtype_is_quantized(dtype_)) {
    pack_plain_rows(w, DType::kF32, dtype_, n, k_, dst);
    return;
  }
  // A panel's rows at a time, quantized, then packed like a file's.
  const int64_t row_bytes = core::dtype_row_bytes(dtype_, k_);
  std::vector<uint8_t> rows(size_t(kPanel * row_bytes));
  for (int64_t p0 = 0; p0 < n; p0 += kPanel) {
    const int64_t m = std::min(kPanel, n - p0);
    for (int64_t r = 0; r < m; ++r)
      quantize_row(dtype_, w + (p0 + r) * k_, &rows[size_t(r * row_bytes)], k_);
    pack_quantized(rows.data(), m, row_bytes, dtype_, dst + (p0 / kPanel) * panel_bytes());
  }
}

PackedWeight PackedWeight::from_f32_rows(
    int64_t n, int64_t k, DType dtype, const Arena& arena,
    const std::function<void(int64_t, int64_t, float*)>& rows) {
  PackedWeight w(n, k, dtype, arena);
  constexpr int64_t kChunk = 8 * kPanel;
  core::AlignedBuffer chunk(size_t(std::min(n, kChunk) * k) * sizeof(float),
                            core::AlignedBuffer::Pages::kSmall, core::AlignedBuffer::Fill::kNone);
  for (int64_t r0 = 0; r0 < n; r0 += kChunk) {
    const int64_t m = std::min(kChunk, n - r0);
    rows(r0, r0 + m, chunk.as<float>());
    w.pack_f32(chunk.as<float>(), r0, m);
  }
  return w;
}

PackedWeight PackedWeight::from_rows(const void* rows, DType src_type, int64_t n, int64_t k,
                                     DType storage, const Arena& arena) {
  PackedWeight w(n, k, storage, arena);
  if (core::dtype_is_quantized(src_type) || core::dtype_is_quantized(storage)) {
    ANCHORAGE_CHECK_MSG(src_type == storage, "quantized weights are stored as they come");
    pack_quantized(static_cast<const uint8_t*>(rows), n, core::dtype_row_bytes(src_type, k),
                   src_type, w.data_.get());
    return w;
  }
  pack_plain_rows(rows, src_type, storage, n, k, w.data_.get());
  return w;
}

PackedWeight PackedWeight::over_rows(const void* rows, DType type, int64_t n, int64_t k,
                                     std::shared_ptr<const void> keep, const Arena& arena) {
  ANCHORAGE_CHECK(n > 0 && k > 0 && rows != nullptr);
  ANCHORAGE_CHECK_MSG(k % core::dtype_block_elements(type) == 0,
                      "K must be a multiple of the quantization block");
  PackedWeight w;
  w.n_ = n;
  w.k_ = k;
  w.dtype_ = type;
  w.deferred_ = std::make_shared<Deferred>();
  w.deferred_->rows = static_cast<const uint8_t*>(rows);
  w.deferred_->keep = std::move(keep);
  w.deferred_->arena = arena;
  return w;
}

const void* PackedWeight::panels() const {
  if (data_) return data_.get();
  return deferred_ ? deferred_->panels.load(std::memory_order_acquire) : nullptr;
}

const void* PackedWeight::panel(int64_t p) const {
  const uint8_t* base = static_cast<const uint8_t*>(panels());
  ANCHORAGE_CHECK_MSG(base != nullptr, "PackedWeight::panel: the weight is not packed yet");
  return base + p * panel_bytes();
}

void PackedWeight::panels_from_rows(int64_t p0, int64_t p1, uint8_t* dst) const {
  ANCHORAGE_CHECK(deferred_ && 0 <= p0 && p0 <= p1 && p1 <= n_panels());
  const int64_t r0 = p0 * kPanel, r1 = std::min(p1 * kPanel, n_);
  if (r1 <= r0) return;
  if (core::dtype_is_quantized(dtype_)) {
    pack_quantized(file_row(r0), r1 - r0, core::dtype_row_bytes(dtype_, k_), dtype_, dst);
    return;
  }
  if (r1 - r0 < (p1 - p0) * kPanel)  // lanes past n read as 0
    std::memset(dst + (p1 - p0 - 1) * panel_bytes(), 0, size_t(panel_bytes()));
  pack_plain_rows(file_row(r0), dtype_, dtype_, r1 - r0, k_, dst);
}

void PackedWeight::pack(core::ThreadPool* pool) const {
  if (data_ || !deferred_) return;
  Deferred& d = *deferred_;
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.panels.load(std::memory_order_acquire) != nullptr) return;
  std::shared_ptr<uint8_t> storage = allocate(d.arena);
  // From the rows (nothing is published yet), in runs of panels: a few per thread.
  const int64_t threads = pool != nullptr ? pool->n_threads() : 1;
  const int64_t runs = std::min(n_panels(), 4 * threads);
  core::parallel_for(threads > 1 ? pool : nullptr, runs, [&](int64_t r) {
    const int64_t p0 = n_panels() * r / runs, p1 = n_panels() * (r + 1) / runs;
    panels_from_rows(p0, p1, storage.get() + p0 * panel_bytes());
  });
  d.storage = storage;
  d.panels.store(storage.get(), std::memory_order_release);
}

const uint8_t* PackedWeight::file_row(int64_t row) const {
  return deferred_->rows + row * core::dtype_row_bytes(dtype_, k_);
}

void PackedWeight::block_of(int64_t row, int64_t kb, uint8_t* out) const {
  const int64_t bb = core::dtype_block_bytes(dtype_);
  const PanelLayout layout = panel_layout(dtype_);
  const uint8_t* src = static_cast<const uint8_t*>(panel(row / kPanel)) + kb * kPanel * bb;
  for (int64_t b = 0; b < bb; ++b) out[b] = src[layout.offset(int(b), int(row % kPanel))];
  if (dtype_ == DType::kQ3_K) {  // the code bytes back to hmask and qs
    for (int i = 0; i < 32; ++i)
      q3_k_from_panel(out[i], out[32 + i], out[64 + i], &out[i], &out[32 + i], &out[64 + i]);
  }
}

const uint8_t* PackedWeight::element(int64_t row, int64_t col) const {
  const int64_t size = core::dtype_size(dtype_);
  return static_cast<const uint8_t*>(panel(row / kPanel)) + (col * kPanel + row % kPanel) * size;
}

float PackedWeight::at(int64_t row, int64_t col) const {
  if (!packed()) {  // the file's row
    float values[256];
    const int64_t be = core::dtype_block_elements(dtype_);
    dequantize_row(dtype_, file_row(row) + (col / be) * core::dtype_row_bytes(dtype_, be), values,
                   be);
    return values[col % be];
  }
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
  if (!packed()) {  // the file's row: the bytes the panels hold for it
    dequantize_row(dtype_, file_row(row), out, k_);
    return;
  }
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

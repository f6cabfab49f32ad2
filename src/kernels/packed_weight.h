// PackedWeight: a linear layer's weight W [N out][K in] (PyTorch order, y = W x), stored in
// column panels for the GEMM: panel p holds output rows [kPanel*p, kPanel*p + kPanel), rows
// past N zero-filled.
//
// Storage types (core::DType):
//   - plain f32, bf16, f16: panel p is [K][kPanel] elements, k-major;
//   - block-quantized types (ggml's blocks, kernels/quant.h; K a multiple of the block size B):
//   panel p is K/B k blocks; k block kb holds the kPanel blocks
//     W[32p + lane][kb*B, kb*B + B) exactly as the GGUF rows had them, re-ordered only: byte b
//     of lane l's block at kernels/panel_layout.h's offset(b, l) (byte-interleaved, b * kPanel
//     + l, so every byte position of the 32 lanes is one contiguous run; or, for the quant
//     bytes of the types that have a quad run, the 4 bytes of 4 consecutive inputs of a lane
//     side by side, what the integer dot products multiply). Weights stay quantized in memory
//     (storage = the file's bytes); the GEMM reads them in place (kernels/gemm.h).
// Every weight's f32 value is kernels::dequantize_row() of its stored bits: what at(),
// get_row() and the GEMM use alike.
//
// A weight made by over_rows() starts without panels: it keeps a GGUF tensor's rows where the
// file has them (kept mapped), and pack() makes its panels later, on any thread (the server packs
// in the background after it is ready: docs/performance.md "Start-up"); gemm() packs a weight it
// finds without them before it runs. The panels are the bytes from_rows() makes, so every result
// is the same, bit for bit, whenever the switch happens.
// Immutable after construction but for that switch, which adds the panels and changes no stored
// value; safe to share between threads. Copies share the panels (and the switch).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "core/dtype.h"
#include "core/huge_page_arena.h"
#include "core/thread_pool.h"

namespace anchorage::kernels {

class PackedWeight {
 public:
  static constexpr int64_t kPanel = 32;  // output rows per panel (two AVX-512 vectors)

  // Where the panels live: memory of their own (a core::AlignedBuffer: 4 KiB pages under 2 MiB),
  // or, given an arena, cut from its shared huge pages (core/huge_page_arena.h: what a model's
  // loader passes). A weight keeps its arena alive; copies share the panels.
  using Arena = std::shared_ptr<core::HugePageArena>;

  PackedWeight() = default;
  // w: [n][k] row-major f32, stored as `dtype` (any type; bf16/f16 round to nearest even,
  // quantized types use kernels::quantize_row, which needs k % block == 0).
  PackedWeight(const float* w, int64_t n, int64_t k, core::DType dtype,
               const Arena& arena = nullptr);

  // rows: [n] rows of k elements of src_type, each core::dtype_row_bytes(src_type, k) bytes,
  // back to back (a GGUF tensor's data). storage: src_type itself (quantized data is kept bit
  // for bit), or, for a plain src_type, any plain type (converted: f32 -> bf16/f16 rounds to
  // nearest even). k must be a multiple of the block size of a quantized type.
  static PackedWeight from_rows(const void* rows, core::DType src_type, int64_t n, int64_t k,
                                core::DType storage, const Arena& arena = nullptr);

  // The same as PackedWeight(w, n, k, dtype, arena), from f32 rows made a few panels at a time:
  // rows(r0, r1, out) writes rows [r0, r1) to out ([r1 - r0][k]). Equal bytes; what it saves is
  // the f32 copy of the whole matrix (`small`'s random embedding: 311 MB of fresh pages).
  static PackedWeight from_f32_rows(int64_t n, int64_t k, core::DType dtype, const Arena& arena,
                                    const std::function<void(int64_t, int64_t, float*)>& rows);

  // A weight over `rows` (as from_rows() with storage == src_type) that does not copy them yet:
  // `keep` keeps them valid (the mapped file) as long as the weight lives; pack() makes the
  // panels in `arena` (or memory of their own): a background thread, or gemm() the first time
  // it needs them. get_row() and at() read the rows until then.
  static PackedWeight over_rows(const void* rows, core::DType type, int64_t n, int64_t k,
                                std::shared_ptr<const void> keep, const Arena& arena = nullptr);
  // Whether the panels exist (always, but for a weight made by over_rows() until pack()).
  bool packed() const { return panels() != nullptr; }
  // Makes the panels of a weight made by over_rows() (a no-op when they exist): the bytes
  // from_rows() would have made, split over pool's threads when given (may be null).
  // Thread-safe: one call packs, the others wait for it and return.
  void pack(core::ThreadPool* pool = nullptr) const;
  // Panel 0, or null while a weight made by over_rows() has no panels.
  const void* panels() const;

  int64_t rows() const { return n_; }  // N, outputs
  int64_t cols() const { return k_; }  // K, inputs
  core::DType dtype() const { return dtype_; }
  int64_t n_panels() const { return (n_ + kPanel - 1) / kPanel; }
  int64_t storage_bytes() const { return n_panels() * panel_bytes(); }
  // Bytes of one panel: kPanel * core::dtype_row_bytes(dtype(), K).
  int64_t panel_bytes() const { return kPanel * core::dtype_row_bytes(dtype_, k_); }
  // Panel p (layout above). The weight must be packed().
  const void* panel(int64_t p) const;
  // Panel p's inputs [k0, k0 + kc) as f32 [kc][kPanel] (k-major): what the GEMM multiplies
  // with, the same bits as at(). Runs the active ISA's unpacker (kernels/unpack_impl.h). For a
  // quantized type k0 and kc are multiples of the block size.
  void unpack_panel(int64_t p, int64_t k0, int64_t kc, float* out) const;
  // W[row][0..K) as f32 (the stored values exactly). Used for embedding lookups.
  void get_row(int64_t row, float* out) const;
  // The stored value of W[row][col] as f32 (what the GEMM multiplies with).
  float at(int64_t row, int64_t col) const;

 private:
  // Storage for every byte the packing writes (a plain type's last panel zeroed).
  PackedWeight(int64_t n, int64_t k, core::DType dtype, const Arena& arena);
  // Packs f32 rows [r0, r0 + n) (r0 a multiple of kPanel) from w ([n][k]) into their panels.
  void pack_f32(const float* w, int64_t r0, int64_t n);
  // The GGUF bytes of W[row]'s block kb (quantized), gathered from the panel's layout.
  void block_of(int64_t row, int64_t kb, uint8_t* out) const;
  // Address of W[row][col] (plain types).
  const uint8_t* element(int64_t row, int64_t col) const;
  // The stored bytes of W[row]: the file's row (core::dtype_row_bytes()), while not packed.
  const uint8_t* file_row(int64_t row) const;
  // Panels [p0, p1) of a weight made by over_rows(), made from its rows into out (panel_bytes()
  // each, the layout above): what pack() runs per thread.
  void panels_from_rows(int64_t p0, int64_t p1, uint8_t* out) const;

  // What a weight made by over_rows() shares with its copies: the rows, and the panels once
  // pack() has published them.
  struct Deferred {
    const uint8_t* rows = nullptr;
    std::shared_ptr<const void> keep;
    Arena arena;
    std::mutex mu;                                // one pack() at a time
    std::atomic<const uint8_t*> panels{nullptr};  // published with release, read with acquire
    std::shared_ptr<uint8_t> storage;             // owns the panels
  };

  // Storage for panels of this shape and type (written by the caller).
  std::shared_ptr<uint8_t> allocate(const Arena& arena) const;

  int64_t n_ = 0;
  int64_t k_ = 0;
  core::DType dtype_ = core::DType::kF32;
  std::shared_ptr<uint8_t> data_;       // owns (or keeps alive) the storage_bytes() of panels
  std::shared_ptr<Deferred> deferred_;  // a weight made by over_rows(); data_ is null then
};

}  // namespace anchorage::kernels

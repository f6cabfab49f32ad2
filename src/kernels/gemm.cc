// gemm(): splits the job into blocks of rows x panels, hands them to the thread pool and runs
// each with the block kernel of the active ISA (gemm_avx512.cc, gemm_avx2.cc, gemm_scalar.cc).
// Blocks partition M and N only, never K, so neither the split nor the thread count can change
// a bit of the result (gemm.h). f32 and bf16 panels are read in place (nothing is allocated);
// the other storage types (f16 and the quantized ones) go through a per-thread f32 buffer: a block
// unpacks its panels one K block (kGemmKc) at a time and runs the f32 kernel on them, the
// partial sums carried in y between K blocks, so the chain is the f32 GEMM's over the
// dequantized weights, bit for bit. On AVX-512 and AVX2, blocks of <= 8 rows (decode, verify)
// read f16, Q8_0, Q4_K and Q6_K panels in place and dequantize in registers
// (gemm_decode_impl.h), to the same values, so a row's bits do not depend on which path its
// block took; the other quantized types always unpack.
// Weight types with an integer dot (kernels/quant_dot.h; by default every quantized type) take
// another arithmetic for every M: the rows' activations are quantized once per call (per weight
// type and K in a group), then every block runs the ISA's integer-dot kernel
// (gemm_int8_impl.h), whose bits equal the scalar one's. gemm_group() plans each layer as gemm()
// would and runs the blocks of all of them in one parallel_for.
#include "kernels/gemm.h"

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "core/isa.h"
#include "kernels/gemm_job.h"
#include "kernels/quant_dot.h"

namespace anchorage::kernels {

namespace {

// Blocks per thread: enough that dynamic hand-out evens out a core busy with something else.
constexpr int64_t kBlocksPerThread = 4;

using BlockFn = void (*)(const GemmJob&, const GemmBlock&);

BlockFn block_fn() {
  switch (core::active_isa()) {
    case core::Isa::kAvx512:
      return &isa_avx512::gemm_block;
    case core::Isa::kAvx2:
      return &isa_avx2::gemm_block;
    case core::Isa::kScalar:
      break;
  }
  return &isa_scalar::gemm_block;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The f32 buffer a thread unpacks weight panels into (grown, never shrunk).
float* unpack_buffer(int64_t floats) {
  thread_local core::AlignedBuffer buf;
  if (int64_t(buf.size()) < floats * 4) buf = core::AlignedBuffer(size_t(floats) * 4);
  return buf.as<float>();
}

// Rows up to which a block unpacks short K blocks (all its <= 8 panels x kGemmSmallKc x 32 f32
// = 64 KiB, read back from L1/L2) instead of kGemmKc: with so few rows the weights are not
// reused, so the unpacked copy only has to be cheap to write and read, while the decode tiles
// still get all the block's panels at once (16 accumulator chains on AVX-512). K-quants need
// whole 256-blocks: 256 KiB.
constexpr int64_t kSmallRows = 8;
constexpr int64_t kGemmSmallKc = 64;

// One block of a job whose panels must be unpacked: K blocks in order, each unpacked for the
// block's panels and multiplied with the f32 kernel, accumulating from the second on. The
// panel groups and K blocks change which partial sums pass through y, never a chain.
void unpacked_block(BlockFn fn, const GemmJob& job, const PackedWeight& w, const GemmBlock& b) {
  // Short K blocks for few rows, but never shorter than a quantization block.
  const int64_t block = core::dtype_block_elements(w.dtype());
  const int64_t kc_max = b.m1 - b.m0 > kSmallRows ? kGemmKc
                         : kGemmSmallKc > block   ? kGemmSmallKc
                                                  : block;
  const int64_t np = b.p1 - b.p0;
  for (int64_t k0 = 0; k0 < job.K; k0 += kc_max) {
    const int64_t kc = job.K - k0 < kc_max ? job.K - k0 : kc_max;
    float* buf = unpack_buffer(np * kc * PackedWeight::kPanel);
    for (int64_t q = 0; q < np; ++q)
      w.unpack_panel(b.p0 + q, k0, kc, buf + q * kc * PackedWeight::kPanel);
    GemmJob sub;
    sub.x = job.x + k0;
    sub.ldx = job.ldx;
    sub.panels = buf;
    sub.bf16 = false;
    sub.accumulate = k0 > 0;
    sub.K = kc;
    sub.N = job.N - b.p0 * PackedWeight::kPanel;
    sub.y = job.y + b.p0 * PackedWeight::kPanel;
    sub.ldy = job.ldy;
    fn(sub, GemmBlock{b.m0, b.m1, 0, np});
  }
}

// The quantized activations of a call (kernels/quant_dot.h), on the calling thread.
uint8_t* act_buffer(int64_t bytes) {
  thread_local core::AlignedBuffer buf;
  if (int64_t(buf.size()) < bytes) buf = core::AlignedBuffer(size_t(bytes));
  return static_cast<uint8_t*>(buf.data());
}

using Int8Fn = void (*)(int, const GemmJob&, const GemmBlock&);

Int8Fn int8_fn() {
  switch (core::active_isa()) {
    case core::Isa::kAvx512:
      return core::cpu_has_avx512_vnni() ? &isa_vnni::gemm_int8_block : &isa_avx2::gemm_int8_block;
    case core::Isa::kAvx2:
      return &isa_avx2::gemm_int8_block;
    case core::Isa::kScalar:
      break;
  }
  return &isa_scalar::gemm_int8_block;
}

}  // namespace

namespace {

using DecodeFn = void (*)(int, const GemmJob&, const GemmBlock&);

// One layer of a call: its job, the path its blocks take, and its split into blocks of rows x
// panels. The path and the split depend on the layer, M and the thread count only.
struct LayerPlan {
  const PackedWeight* w = nullptr;
  GemmJob job;
  BlockFn fn = nullptr;
  Int8Fn int8_block = nullptr;
  DecodeFn decode_fn = nullptr;
  bool in_place = false, in_registers = false;
  int64_t register_rows = 0;
  int64_t panels = 0, mc = 0, pc = 0, n_blocks = 0, tasks = 0;

  void run(int64_t t, int64_t M) const {
    const int64_t mb = t / n_blocks, nb = t % n_blocks;
    GemmBlock b;
    b.m0 = mb * mc;
    b.m1 = b.m0 + mc < M ? b.m0 + mc : M;
    b.p0 = nb * pc;
    b.p1 = b.p0 + pc < panels ? b.p0 + pc : panels;
    if (int8_block != nullptr) {
      int8_block(int(w->dtype()), job, b);
    } else if (in_place) {
      fn(job, b);
    } else if (in_registers && b.m1 - b.m0 <= register_rows) {
      decode_fn(int(w->dtype()), job, b);
    } else {
      unpacked_block(fn, job, *w, b);
    }
  }
};

LayerPlan plan_layer(const float* x, int64_t M, int64_t ldx, const GemmOutput& out,
                     int64_t threads) {
  const PackedWeight& w = *out.w;
  LayerPlan l;
  l.w = &w;
  l.job.x = x;
  l.job.ldx = ldx;
  l.job.panels = w.panel(0);
  l.job.bf16 = w.dtype() == core::DType::kBF16;
  l.job.K = w.cols();
  l.job.N = w.rows();
  l.job.y = out.y;
  l.job.ldy = out.ldy;
  l.fn = block_fn();
  const core::DType dt = w.dtype();
  l.in_place = dt == core::DType::kF32 || dt == core::DType::kBF16;
  // AVX-512 and AVX2 read f16 and the quantized types in place for few rows (decode, verify):
  // dequantized in registers, no unpacked copy (gemm_decode_impl.h).
  l.decode_fn = core::active_isa() == core::Isa::kAvx512 ? &isa_avx512::gemm_decode_block
                : core::active_isa() == core::Isa::kAvx2 ? &isa_avx2::gemm_decode_block
                                                         : nullptr;
  // The types gemm_decode_impl.h has register dequantizers for; the others always unpack.
  const bool has_decode_tile = dt == core::DType::kF16 || dt == core::DType::kQ8_0 ||
                               dt == core::DType::kQ4_K || dt == core::DType::kQ6_K;
  l.in_registers = !l.in_place && l.decode_fn != nullptr && has_decode_tile;
  // Rows up to which a block dequantizes in registers. AVX2 runs row tiles of 2, each
  // dequantizing again; for Q6_K (the costliest to assemble) unpacking once measured faster
  // from 3 rows on (K 512, N 2048, M = 3 / 8: 166 / 279 us against 207 / 465 us).
  l.register_rows =
      core::active_isa() == core::Isa::kAvx2 && dt == core::DType::kQ6_K ? 2 : kSmallRows;
  if (int8_dot_type(dt)) l.int8_block = int8_fn();

  // Rows in blocks of at most kGemmMc (evenly sized), panels in blocks of at most
  // kGemmNcPanels, fewer panels a block when that gives each thread kBlocksPerThread blocks.
  l.panels = w.n_panels();
  const int64_t m_blocks = ceil_div(M, kGemmMc);
  l.mc = ceil_div(M, m_blocks);
  const int64_t want_n_blocks = ceil_div(kBlocksPerThread * threads, m_blocks);
  l.pc = ceil_div(l.panels, want_n_blocks < l.panels ? want_n_blocks : l.panels);
  if (l.pc > kGemmNcPanels) l.pc = kGemmNcPanels;
  l.n_blocks = ceil_div(l.panels, l.pc);
  l.tasks = m_blocks * l.n_blocks;
  return l;
}

}  // namespace

void gemm(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y, int64_t ldy,
          core::ThreadPool* pool) {
  const GemmOutput out{&w, y, ldy};
  gemm_group(x, M, ldx, std::span(&out, 1), pool);
}

void gemm_group(const float* x, int64_t M, int64_t ldx, std::span<const GemmOutput> outs,
                core::ThreadPool* pool) {
  ANCHORAGE_CHECK(M >= 0 && outs.size() <= kMaxGemmGroup);
  if (M == 0 || outs.empty()) return;
  const int64_t threads = pool ? pool->n_threads() : 1;
  // A weight still read from a file's rows (PackedWeight::over_rows()) is packed first, with
  // the pool: the same bytes pack() always makes, so the same results, and once for good
  // (making a block's panels from the rows on every call measured 5-6 x slower decode:
  // docs/performance.md "Start-up").
  for (const GemmOutput& o : outs) {
    if (!o.w->packed()) o.w->pack(pool);
  }
  LayerPlan plans[kMaxGemmGroup];
  int64_t tasks = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    ANCHORAGE_CHECK(ldx >= outs[i].w->cols() && outs[i].ldy >= outs[i].w->rows());
    plans[i] = plan_layer(x, M, ldx, outs[i], threads);
    tasks += plans[i].tasks;
  }

  // Each row quantized once per activation format, by the one baseline quantizer every ISA
  // reads, and shared by the layers of that weight type and K; rows split over the pool (a
  // row's bytes depend on that row only).
  int64_t act_bytes = 0;
  size_t first_of_type[kMaxGemmGroup];
  for (size_t i = 0; i < outs.size(); ++i) {
    first_of_type[i] = i;
    if (plans[i].int8_block == nullptr) continue;
    for (size_t j = 0; j < i; ++j) {
      if (plans[j].int8_block != nullptr && outs[j].w->dtype() == outs[i].w->dtype() &&
          outs[j].w->cols() == outs[i].w->cols()) {
        first_of_type[i] = j;
        break;
      }
    }
    if (first_of_type[i] == i)
      act_bytes += M * act_format(outs[i].w->dtype(), outs[i].w->cols()).row_bytes;
  }
  if (act_bytes > 0) {
    uint8_t* act = act_buffer(act_bytes);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (plans[i].int8_block == nullptr) continue;
      const core::DType dt = outs[i].w->dtype();
      const int64_t K = outs[i].w->cols();
      const ActFormat f = act_format(dt, K);
      GemmJob& job = plans[i].job;
      job.ldq = f.row_bytes;
      job.xd_off = f.d_offset;
      job.xs_off = f.s_offset;
      if (first_of_type[i] != i) {
        job.xq = plans[first_of_type[i]].job.xq;
        continue;
      }
      uint8_t* q = act;
      job.xq = q;
      act += M * f.row_bytes;
      constexpr int64_t kRowsPerTask = 16;
      core::parallel_for(
          M > kRowsPerTask ? pool : nullptr, ceil_div(M, kRowsPerTask), [&](int64_t t) {
            const int64_t m1 = (t + 1) * kRowsPerTask < M ? (t + 1) * kRowsPerTask : M;
            for (int64_t m = t * kRowsPerTask; m < m1; ++m)
              quantize_act_row(dt, x + m * ldx, K, q + m * f.row_bytes);
          });
    }
  }

  // The layers' blocks as one list: one trip through the pool for the whole group.
  core::parallel_for(pool, tasks, [&](int64_t t) {
    size_t i = 0;
    while (t >= plans[i].tasks) t -= plans[i++].tasks;
    plans[i].run(t, M);
  });
}

}  // namespace anchorage::kernels

// gemm(): splits the job into blocks of rows x panels, hands them to the thread pool and runs
// each with the block kernel of the active ISA (gemm_avx512.cc, gemm_avx2.cc, gemm_scalar.cc).
// Blocks partition M and N only, never K, so neither the split nor the thread count can change
// a bit of the result (gemm.h). Nothing is allocated: the kernels work in registers and y.
#include "kernels/gemm.h"

#include "core/check.h"
#include "core/isa.h"
#include "kernels/gemm_job.h"

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

}  // namespace

void gemm(const float* x, int64_t M, int64_t ldx, const PackedWeight& w, float* y, int64_t ldy,
          core::ThreadPool* pool) {
  const int64_t K = w.cols(), N = w.rows();
  ANCHORAGE_CHECK(M >= 0 && ldx >= K && ldy >= N);
  if (M == 0) return;
  GemmJob job;
  job.x = x;
  job.ldx = ldx;
  job.panels = w.panel(0);
  job.bf16 = w.dtype() == core::DType::kBF16;
  job.K = K;
  job.N = N;
  job.y = y;
  job.ldy = ldy;

  // Rows in blocks of at most kGemmMc (evenly sized), panels in blocks of at most
  // kGemmNcPanels, fewer panels a block when that gives each thread kBlocksPerThread blocks.
  const BlockFn fn = block_fn();
  const int64_t panels = w.n_panels();
  const int64_t threads = pool ? pool->n_threads() : 1;
  const int64_t m_blocks = ceil_div(M, kGemmMc);
  const int64_t mc = ceil_div(M, m_blocks);
  const int64_t want_n_blocks = ceil_div(kBlocksPerThread * threads, m_blocks);
  int64_t pc = ceil_div(panels, want_n_blocks < panels ? want_n_blocks : panels);
  if (pc > kGemmNcPanels) pc = kGemmNcPanels;
  const int64_t n_blocks = ceil_div(panels, pc);

  core::parallel_for(pool, m_blocks * n_blocks, [&](int64_t t) {
    const int64_t mb = t / n_blocks, nb = t % n_blocks;
    GemmBlock b;
    b.m0 = mb * mc;
    b.m1 = b.m0 + mc < M ? b.m0 + mc : M;
    b.p0 = nb * pc;
    b.p1 = b.p0 + pc < panels ? b.p0 + pc : panels;
    fn(job, b);
  });
}

}  // namespace anchorage::kernels

// Tests for the integer-dot GEMM (kernels/quant_dot.h): for every weight type it covers, every
// M (1..9 and prefill-sized), every thread count and every ISA give the bits of the plain
// reference (kernels/ref/gemm_ref.h gemm_int8_ref, which reads the GGUF rows, not the panels),
// compared with memcmp; a row's bits equal the same row inside a large call; the activation
// quantizer rounds as documented; the f32 setting restores the exact-f32 chain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/packed_weight.h"
#include "kernels/quant.h"
#include "kernels/quant_dot.h"
#include "kernels/random_floats.h"
#include "kernels/ref/gemm_ref.h"

namespace anchorage::kernels {
namespace {

using core::DType;
using core::Isa;

// Selects the integer dot and restores the ISA and the setting when a test ends.
class Int8Scope {
 public:
  Int8Scope() : isa_(core::active_isa()), dot_(quant_dot()) { set_quant_dot(QuantDot::kInt8); }
  ~Int8Scope() {
    core::set_active_isa(isa_);
    set_quant_dot(dot_);
  }

 private:
  Isa isa_;
  QuantDot dot_;
};

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (int(isa) <= int(core::detected_isa())) out.push_back(isa);
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr float kSentinel = -12345.5f;

// x [M][ldx] (padded), W [N][K] as GGUF rows of type t and as a PackedWeight of them.
struct Problem {
  int64_t M, K, N, ldx;
  DType t;
  std::vector<float> x;
  std::vector<uint8_t> rows;
  PackedWeight w;

  Problem(int64_t m, int64_t k, int64_t n, DType type, uint64_t seed)
      : M(m), K(k), N(n), ldx(k + 3), t(type) {
    x = random_floats(M * ldx, seed);
    // A few rows with a much larger block and one of zeros, so scales vary between blocks.
    for (int64_t i = 0; i < 16 && i * 7 < M * ldx; ++i) x[size_t(i * 7)] *= 40.0f;
    if (M > 2)
      for (int64_t k2 = 0; k2 < 32; ++k2) x[size_t(2 * ldx + k2)] = 0.0f;
    const std::vector<float> wf = random_floats(N * K, seed + 1000);
    const int64_t rb = core::dtype_row_bytes(t, K);
    rows.resize(size_t(N * rb));
    for (int64_t r = 0; r < N; ++r) quantize_row(t, wf.data() + r * K, rows.data() + r * rb, K);
    w = PackedWeight::from_rows(rows.data(), t, N, K, t);
  }
  std::vector<float> run(const float* xs, int64_t rows_m, core::ThreadPool* pool) const {
    std::vector<float> y(size_t(rows_m * N), kSentinel);
    gemm(xs, rows_m, ldx, w, y.data(), N, pool);
    return y;
  }
  std::vector<float> ref() const {
    std::vector<float> y(size_t(M * N), kSentinel);
    gemm_int8_ref(x.data(), M, ldx, rows.data(), t, N, K, y.data(), N);
    return y;
  }
};

class GemmInt8 : public ::testing::TestWithParam<DType> {};

// M = 300 (a prefill-sized call: row blocks of 150 and row tiles of every ISA), against the
// reference, on every ISA with no pool, 1 and 2 threads; then every M = 1..9 starting at 0,
// 131 and 300 - M equals the same rows of the M = 300 call. K 768: three 256-blocks, chunks of
// the repack; N 300: panel blocks of several sizes and a partial panel.
TEST_P(GemmInt8, EveryRowCountThreadCountAndIsaGivesTheReferenceBits) {
  Int8Scope scope;
  ASSERT_TRUE(int8_dot_type(GetParam()));
  core::ThreadPool one(1), two(2);
  const Problem p(300, 768, 300, GetParam(), 11);
  const std::vector<float> ref = p.ref();
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    for (core::ThreadPool* pool : {static_cast<core::ThreadPool*>(nullptr), &one, &two}) {
      EXPECT_TRUE(same_bits(p.run(p.x.data(), p.M, pool), ref))
          << core::isa_name(isa) << " threads=" << (pool ? pool->n_threads() : 0);
    }
    for (int64_t rows = 1; rows <= 9; ++rows) {
      for (int64_t start : {int64_t(0), int64_t(131), p.M - rows}) {
        for (core::ThreadPool* pool : {static_cast<core::ThreadPool*>(nullptr), &two}) {
          const std::vector<float> part = p.run(p.x.data() + start * p.ldx, rows, pool);
          EXPECT_EQ(0, std::memcmp(part.data(), ref.data() + start * p.N, part.size() * 4))
              << core::isa_name(isa) << " rows=" << rows << " start=" << start;
        }
      }
    }
  }
}

// Small and odd shapes: N below one panel and across panel edges, K of one block.
TEST_P(GemmInt8, SmallShapesGiveTheReferenceBits) {
  Int8Scope scope;
  core::ThreadPool two(2);
  const int64_t block = core::dtype_block_elements(GetParam());
  struct Shape {
    int64_t M, K, N;
  };
  uint64_t seed = 40;
  for (const Shape& s : {Shape{1, block, 1}, Shape{2, block, 33}, Shape{7, 2 * block, 65},
                         Shape{13, 3 * block, 31}, Shape{40, 4 * block, 97}}) {
    const Problem p(s.M, s.K, s.N, GetParam(), seed++);
    const std::vector<float> ref = p.ref();
    for (Isa isa : runnable_isas()) {
      core::set_active_isa(isa);
      EXPECT_TRUE(same_bits(p.run(p.x.data(), p.M, nullptr), ref))
          << core::isa_name(isa) << " M=" << s.M << " K=" << s.K << " N=" << s.N;
      EXPECT_TRUE(same_bits(p.run(p.x.data(), p.M, &two), ref))
          << core::isa_name(isa) << " M=" << s.M << " K=" << s.K << " N=" << s.N;
    }
  }
}

// The f32 setting gives the exact-f32 chain over the dequantized weights again.
TEST_P(GemmInt8, F32SettingGivesTheF32Chain) {
  Int8Scope scope;
  const Problem p(5, 512, 70, GetParam(), 3);
  std::vector<float> deq(size_t(p.N * p.K));
  for (int64_t r = 0; r < p.N; ++r) p.w.get_row(r, deq.data() + r * p.K);
  const PackedWeight w_f32(deq.data(), p.N, p.K, DType::kF32);
  std::vector<float> ref(size_t(p.M * p.N));
  gemm_ref(p.x.data(), p.M, p.ldx, w_f32, ref.data(), p.N);
  set_quant_dot(QuantDot::kF32);
  EXPECT_FALSE(int8_dot_type(GetParam()));
  EXPECT_TRUE(same_bits(p.run(p.x.data(), p.M, nullptr), ref));
  set_quant_dot(QuantDot::kInt8);
  EXPECT_FALSE(same_bits(p.run(p.x.data(), p.M, nullptr), ref));
}

// Blocks of random bytes (every code, -128 for Q8_0, 15 for Q4_K, 31 for Q5_K, 63 for Q6_K, any
// scale and min byte), then of all-ones bytes (every code at its largest magnitude: the largest
// sums), with the f16 scales set to finite values, against activations whose blocks reach both
// +-127 (random signs; then all +127 with the all-ones bytes): the integer paths must neither
// saturate (AVX2's 16-bit pair sums and its decode path's 16-bit sums over 8 or 4 groups) nor
// overflow, for the whole batch and for each row alone (the decode paths).
class GemmInt8Extremes : public ::testing::TestWithParam<std::tuple<DType, bool>> {};

TEST_P(GemmInt8Extremes, BlockBytesAndFullScaleActivations) {
  Int8Scope scope;
  const auto [t, all_ones] = GetParam();
  const int64_t M = 9, K = 512, N = 70;
  Problem p(M, K, N, t, 21);
  core::Rng rng(22);
  for (auto& b : p.rows) b = all_ones ? uint8_t(0xff) : uint8_t(rng.next_u64());
  const int64_t bb = core::dtype_block_bytes(t), rb = core::dtype_row_bytes(t, K);
  for (int64_t r = 0; r < N; ++r) {
    for (int64_t blk = 0; blk < K / core::dtype_block_elements(t); ++blk) {
      uint8_t* b = p.rows.data() + r * rb + blk * bb;
      const uint16_t h = uint16_t(0x2000 + rng.next_u64() % 0x1000);  // finite, ~2^-7 .. 2^-5
      uint8_t* d = t == DType::kQ6_K   ? b + 208
                   : t == DType::kQ3_K ? b + 108
                   : t == DType::kQ2_K ? b + 80
                                       : b;
      d[0] = uint8_t(h & 0xff);
      d[1] = uint8_t(h >> 8);
      if (t == DType::kQ4_K || t == DType::kQ5_K || t == DType::kQ4_1 || t == DType::kQ5_1 ||
          t == DType::kQ2_K) {  // dmin, or the min
        d[2] = uint8_t(h & 0xff);
        d[3] = uint8_t(h >> 8);
      }
    }
  }
  // Every activation at +-(block max): every quant +-127.
  for (int64_t i = 0; i < M * p.ldx; ++i)
    p.x[size_t(i)] = all_ones || rng.next_u64() % 2 ? 3.0f : -3.0f;
  p.w = PackedWeight::from_rows(p.rows.data(), t, N, K, t);
  const std::vector<float> ref = p.ref();
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    EXPECT_TRUE(same_bits(p.run(p.x.data(), M, nullptr), ref)) << core::isa_name(isa);
    for (int64_t m = 0; m < M; ++m) {
      const std::vector<float> row = p.run(p.x.data() + m * p.ldx, 1, nullptr);
      EXPECT_EQ(0, std::memcmp(row.data(), ref.data() + m * N, size_t(N) * 4))
          << core::isa_name(isa) << " row " << m;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, GemmInt8Extremes,
    ::testing::Combine(::testing::Values(DType::kQ8_0, DType::kQ4_K, DType::kQ6_K, DType::kQ4_0,
                                         DType::kIQ4_NL, DType::kQ5_K, DType::kIQ4_XS, DType::kQ5_0,
                                         DType::kQ4_1, DType::kQ5_1, DType::kQ3_K, DType::kQ2_K),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(core::dtype_name(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_all_ones" : "_random");
    });

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmInt8,
                         ::testing::Values(DType::kQ8_0, DType::kQ4_K, DType::kQ6_K, DType::kQ4_0,
                                           DType::kIQ4_NL, DType::kQ5_K, DType::kIQ4_XS,
                                           DType::kQ5_0, DType::kQ4_1, DType::kQ5_1, DType::kQ3_K,
                                           DType::kQ2_K),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

// Quantizes x in both formats (32-input blocks and the K-quants' 256) with every ISA and
// compares the bytes with the plain build's (memcmp, every byte of the row).
void expect_every_isa_writes_the_same_bytes(const std::vector<float>& x, const std::string& what) {
  const int64_t K = int64_t(x.size());
  for (DType t : {DType::kQ8_0, DType::kQ4_K}) {
    const ActFormat f = act_format(t, K);
    std::vector<uint8_t> want(size_t(f.row_bytes), 0xcd);
    core::set_active_isa(Isa::kScalar);
    quantize_act_row(t, x.data(), K, want.data());
    for (Isa isa : runnable_isas()) {
      core::set_active_isa(isa);
      std::vector<uint8_t> got(size_t(f.row_bytes), 0xcd);
      quantize_act_row(t, x.data(), K, got.data());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size()))
          << core::isa_name(isa) << " " << core::dtype_name(t) << " " << what;
    }
  }
}

// The quantizer is built for every ISA (quant_act_impl.h, quant_act_avx2.cc, quant_act_avx512.cc):
// each writes the bytes of the plain build, for random rows, ties, zeros, signed zeros, subnormals,
// huge values, inf and NaN, in both formats (32-input blocks and the K-quants' 256).
TEST(QuantizeAct, EveryIsaWritesTheSameBytes) {
  Int8Scope scope;
  const int64_t K = 1024;
  std::vector<float> x = random_floats(K, 21);
  for (int64_t k = 256; k < 288; ++k) x[size_t(k)] = 0.0f;
  x[300] = -0.0f;
  x[301] = std::numeric_limits<float>::denorm_min();
  x[302] = -std::numeric_limits<float>::denorm_min() * 7;
  x[400] = 3.0e38f;
  x[401] = -3.0e38f;
  x[520] = std::numeric_limits<float>::infinity();
  x[700] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t k = 768; k < 800; ++k) x[size_t(k)] = float(k - 784) + 0.5f;  // ties at d = 1
  x[800] = 127.0f;
  expect_every_isa_writes_the_same_bytes(x, "");
}

// The vector quantizers against the reference loops on many rows: every K shape a model
// uses, blocks of any scale (a power of two as the block's max makes d exact, so the block's
// half-way values are exact ties), and blocks of zeros, -0, denormals, inf and NaN.
TEST(QuantizeAct, EveryIsaWritesTheSameBytesOnManyRows) {
  Int8Scope scope;
  core::Rng rng(77);
  for (int64_t K : {256, 1024, 2048, 3584}) {
    for (int row = 0; row < 40; ++row) {
      std::vector<float> x = random_floats(K, 1000 + uint64_t(row) * 7 + uint64_t(K));
      for (int64_t b = 0; b < K / 32; ++b) {
        float* xb = x.data() + b * 32;
        const uint64_t kind = rng.next_u64() % 8;
        const float scale = std::ldexp(1.0f, int(rng.next_u64() % 60) - 30);
        for (int i = 0; i < 32; ++i) xb[i] *= scale;
        if (kind == 1) {  // ties: max 127 * 2^e, values (k + 0.5) * 2^e
          xb[0] = 127.0f * scale;
          for (int i = 1; i < 32; ++i)
            xb[i] = (float(int(rng.next_u64() % 253) - 126) + 0.5f) * scale;
        } else if (kind == 2) {
          for (int i = 0; i < 32; ++i) xb[i] = (i % 3 == 0) ? -0.0f : 0.0f;
        } else if (kind == 3) {
          xb[rng.next_u64() % 32] =
              std::numeric_limits<float>::denorm_min() * float(rng.next_u64() % 9);
          xb[rng.next_u64() % 32] = -std::numeric_limits<float>::denorm_min();
        } else if (kind == 4 && rng.next_u64() % 4 == 0) {
          xb[rng.next_u64() % 32] =
              (rng.next_u64() % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
        } else if (kind == 5 && rng.next_u64() % 4 == 0) {
          xb[rng.next_u64() % 32] = std::numeric_limits<float>::quiet_NaN();
        }
      }
      expect_every_isa_writes_the_same_bytes(
          x, "K " + std::to_string(K) + " row " + std::to_string(row));
      if (HasFailure()) return;
    }
  }
}

// Round to nearest even: with amax 127 the scale is 1 and 1 / d = 1, so x * id = x exactly.
TEST(QuantizeAct, RoundsHalfToEvenAndSums) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = 3.5f;
  x[3] = -2.5f;
  x[4] = -0.5f;
  x[5] = 0.5000001f;
  x[6] = -127.0f;
  const ActFormat f = act_format(DType::kQ8_0, 32);
  EXPECT_EQ(f.block, 32);
  EXPECT_EQ(f.row_bytes % 64, 0);
  std::vector<uint8_t> row(size_t(f.row_bytes));
  quantize_act_row(DType::kQ8_0, x.data(), 32, row.data());
  const int8_t* q = reinterpret_cast<const int8_t*>(row.data());
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 2);
  EXPECT_EQ(q[2], 4);
  EXPECT_EQ(q[3], -2);
  EXPECT_EQ(q[4], 0);
  EXPECT_EQ(q[5], 1);
  EXPECT_EQ(q[6], -127);
  float d;
  std::memcpy(&d, row.data() + f.d_offset, 4);
  EXPECT_EQ(d, 1.0f);
  int32_t s;
  std::memcpy(&s, row.data() + f.s_offset, 4);
  EXPECT_EQ(s, 127 + 2 + 4 - 2 + 0 + 1 - 127);
}

// A block of zeros has d = 0 and quants 0; a NaN makes its block's scale NaN (so the outputs
// that read it are NaN, as in the f32 chain), an inf makes it inf; other blocks are unaffected.
TEST(QuantizeAct, ZeroAndNonFiniteBlocks) {
  Int8Scope scope;
  const int64_t K = 128, N = 40;
  std::vector<float> x = random_floats(K, 8);
  for (int64_t k = 0; k < 32; ++k) x[size_t(k)] = 0.0f;
  x[40] = std::numeric_limits<float>::quiet_NaN();
  x[70] = std::numeric_limits<float>::infinity();
  const ActFormat f = act_format(DType::kQ8_0, K);
  std::vector<uint8_t> row(size_t(f.row_bytes));
  quantize_act_row(DType::kQ8_0, x.data(), K, row.data());
  float d[4];
  std::memcpy(d, row.data() + f.d_offset, 16);
  EXPECT_EQ(d[0], 0.0f);
  EXPECT_TRUE(std::isnan(d[1]));
  EXPECT_TRUE(std::isinf(d[2]));
  EXPECT_TRUE(std::isfinite(d[3]));
  for (int64_t k = 0; k < 32; ++k) EXPECT_EQ(int8_t(row[size_t(k)]), 0);
  // Every ISA agrees on the non-finite outputs too.
  const std::vector<float> wf = random_floats(N * K, 9);
  const PackedWeight w(wf.data(), N, K, DType::kQ8_0);
  std::vector<std::vector<float>> per_isa;
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    per_isa.emplace_back(size_t(N));
    gemm(x.data(), 1, K, w, per_isa.back().data(), N, nullptr);
    EXPECT_TRUE(std::isnan(per_isa.back()[0])) << core::isa_name(isa);
  }
  for (size_t i = 1; i < per_isa.size(); ++i) EXPECT_TRUE(same_bits(per_isa[i], per_isa[0]));
}

}  // namespace
}  // namespace anchorage::kernels

// Tests for kernels::gemm and PackedWeight: every ISA and every blocking gives the bits of the
// plain reference (kernels/ref/gemm_ref.h) over the stored weights' f32 values, compared with
// memcmp, for every storage type (f32, bf16, f16, Q8_0, Q4_K, Q6_K).
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/packed_weight.h"
#include "kernels/quant.h"
#include "kernels/quant_dot.h"
#include "kernels/random_floats.h"
#include "kernels/ref/gemm_ref.h"

namespace anchorage::kernels {
namespace {

using core::DType;
using core::Isa;

// Restores the active ISA when a test ends, whatever it set. These tests check the exact-f32
// arithmetic (the chain over dequantized weights), so the scope also selects it for the types
// that otherwise take integer dot products (gemm_int8_test.cc tests those).
class IsaScope {
 public:
  IsaScope() : saved_(core::active_isa()), saved_dot_(quant_dot()) {
    set_quant_dot(QuantDot::kF32);
  }
  ~IsaScope() {
    core::set_active_isa(saved_);
    set_quant_dot(saved_dot_);
  }

 private:
  Isa saved_;
  QuantDot saved_dot_;
};

// The ISAs this CPU can run, lowest first.
std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (int(isa) <= int(core::detected_isa())) out.push_back(isa);
  }
  return out;
}

// K rounded up to the type's block (quantized types need whole blocks per row).
int64_t whole_blocks(int64_t k, DType t) {
  const int64_t b = core::dtype_block_elements(t);
  return (k + b - 1) / b * b;
}

// One GEMM problem: x [M][ldx], W [N][K], y [M][ldy] pre-filled with a sentinel so a write
// past column N (or into the ldy padding) is seen. w_f32 holds w's stored values as f32: the
// reference runs on it, so a quantized GEMM must equal the f32 GEMM of its dequantized weights.
struct Problem {
  int64_t M, K, N, ldx, ldy;
  std::vector<float> x;
  PackedWeight w;
  PackedWeight w_f32;

  Problem(int64_t m, int64_t k, int64_t n, DType dtype, uint64_t seed, int64_t x_pad = 0,
          int64_t y_pad = 0)
      : M(m), K(whole_blocks(k, dtype)), N(n), ldx(K + x_pad), ldy(n + y_pad) {
    x = random_floats(M * ldx, seed);
    const std::vector<float> wf = random_floats(N * K, seed + 1000);
    w = PackedWeight(wf.data(), N, K, dtype);
    std::vector<float> deq(static_cast<size_t>(N * K));
    for (int64_t r = 0; r < N; ++r) w.get_row(r, deq.data() + r * K);
    w_f32 = PackedWeight(deq.data(), N, K, DType::kF32);
  }

  std::vector<float> run(core::ThreadPool* pool) const {
    std::vector<float> y(size_t(M * ldy), kSentinel);
    gemm(x.data(), M, ldx, w, y.data(), ldy, pool);
    return y;
  }
  std::vector<float> run_ref() const {
    std::vector<float> y(size_t(M * ldy), kSentinel);
    gemm_ref(x.data(), M, ldx, w_f32, y.data(), ldy);
    return y;
  }
  static constexpr float kSentinel = -12345.5f;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Shape {
  int64_t M, K, N;
};

// N and K off the 16/32 grid, N < 32, K = 1, K across one and two K-block edges (512), M
// across the row tiles of every ISA (8 on AVX-512, 3 on AVX2), N wide enough for the decode
// tiles of 8, 4 and 2 panels.
const Shape kShapes[] = {
    {1, 1, 1},      {1, 1, 33},    {2, 3, 5},     {3, 5, 7},     {1, 17, 31},    {1, 300, 300},
    {5, 64, 32},    {7, 33, 65},   {8, 64, 32},   {9, 100, 100}, {16, 1, 40},    {17, 257, 45},
    {33, 300, 129}, {2, 513, 290}, {4, 129, 260}, {70, 600, 96}, {100, 37, 250}, {24, 530, 17},
    {1, 70, 1000},  {2, 90, 520},  {3, 40, 700},  {4, 20, 300},  {40, 1100, 70},
};

class GemmShapes : public ::testing::TestWithParam<DType> {};

TEST_P(GemmShapes, EveryIsaMatchesReference) {
  IsaScope scope;
  core::ThreadPool pool(2);
  uint64_t seed = 1;
  for (const Shape& s : kShapes) {
    const Problem p(s.M, s.K, s.N, GetParam(), seed++, /*x_pad=*/3, /*y_pad=*/5);
    const std::vector<float> ref = p.run_ref();
    std::vector<std::vector<float>> per_isa;
    for (Isa isa : runnable_isas()) {
      core::set_active_isa(isa);
      // One thread and two split the panels differently (a decode row takes 8, 4, 2 or 1
      // panels at once depending on the split).
      per_isa.push_back(p.run(nullptr));
      EXPECT_TRUE(same_bits(per_isa.back(), ref))
          << core::isa_name(isa) << " M=" << s.M << " K=" << s.K << " N=" << s.N;
      EXPECT_TRUE(same_bits(p.run(&pool), ref))
          << core::isa_name(isa) << " 2 threads M=" << s.M << " K=" << s.K << " N=" << s.N;
    }
    for (size_t i = 1; i < per_isa.size(); ++i) EXPECT_TRUE(same_bits(per_isa[i], per_isa[0]));
  }
}

TEST_P(GemmShapes, OneThreadEqualsTwoThreads) {
  IsaScope scope;
  core::ThreadPool one(1), two(2);
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    const Problem p(100, 1100, 200, GetParam(), 77);  // K across two K blocks
    EXPECT_TRUE(same_bits(p.run(&one), p.run(&two))) << core::isa_name(isa);
    EXPECT_TRUE(same_bits(p.run(nullptr), p.run(&two))) << core::isa_name(isa);
  }
}

// A row's result may not depend on M, on the rows that share its tile, or on where its call
// starts: each row of an M=1024 call equals the same row computed in calls of M = 1, 7, 64
// started at positions that fall inside, across and at the ends of tiles and blocks.
TEST_P(GemmShapes, RowsIndependentOfBatch) {
  IsaScope scope;
  core::ThreadPool pool(2);
  const int64_t M = 1024, K = 600, N = 100;
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    const Problem p(M, K, N, GetParam(), 5);
    const std::vector<float> full = p.run(&pool);
    if (isa == core::detected_isa()) {
      EXPECT_TRUE(same_bits(full, p.run_ref()));
    }
    struct Slice {
      int64_t start, rows;
    };
    for (const Slice& sl : {Slice{0, 1}, Slice{5, 1}, Slice{1023, 1}, Slice{3, 7}, Slice{253, 7},
                            Slice{1017, 7}, Slice{0, 64}, Slice{100, 64}, Slice{960, 64}}) {
      std::vector<float> part(size_t(sl.rows * N), Problem::kSentinel);
      gemm(p.x.data() + sl.start * p.ldx, sl.rows, p.ldx, p.w, part.data(), N, &pool);
      EXPECT_EQ(0, std::memcmp(part.data(), full.data() + sl.start * N, part.size() * 4))
          << core::isa_name(isa) << " start=" << sl.start << " rows=" << sl.rows;
      gemm(p.x.data() + sl.start * p.ldx, sl.rows, p.ldx, p.w, part.data(), N, nullptr);
      EXPECT_EQ(0, std::memcmp(part.data(), full.data() + sl.start * N, part.size() * 4))
          << core::isa_name(isa) << " start=" << sl.start << " rows=" << sl.rows;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmShapes,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16, DType::kQ8_0,
                                           DType::kQ4_K, DType::kQ6_K, DType::kQ4_0, DType::kQ4_1,
                                           DType::kQ5_0, DType::kQ5_1, DType::kQ5_K, DType::kQ3_K,
                                           DType::kQ2_K, DType::kIQ4_NL, DType::kIQ4_XS),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

// The small-M path (blocks of <= 8 rows: decode, verify) reads f16 and quantized panels in
// place and dequantizes in registers on AVX-512 and AVX2 (gemm_decode_impl.h); more rows
// unpack a K block at a time. Every M = 1..9 (9 takes a row tile of 8 on AVX-512 plus one, and
// the unpacking path in a block of 9) must give each row the bits of that row inside an
// M = 1,024 call, on 1 and 2 threads and with no pool, on every ISA, and the reference's. K
// spans three K-quant blocks and two kGemmKc blocks; N = 300 leaves panel groups of 8, 4, 2
// and 1 and a partial panel.
class GemmSmallM : public ::testing::TestWithParam<DType> {};

TEST_P(GemmSmallM, EveryRowCountEqualsTheRowInALargeBatch) {
  IsaScope scope;
  core::ThreadPool one(1), two(2);
  const int64_t M = 1024, K = 768, N = 300;
  const Problem p(M, K, N, GetParam(), 9, /*x_pad=*/3, /*y_pad=*/0);
  const std::vector<float> ref = p.run_ref();
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    const std::vector<float> full = p.run(&two);
    EXPECT_TRUE(same_bits(full, ref)) << core::isa_name(isa);
    for (int64_t rows = 1; rows <= 9; ++rows) {
      for (int64_t start : {int64_t(0), int64_t(509), M - rows}) {
        for (core::ThreadPool* pool : {static_cast<core::ThreadPool*>(nullptr), &one, &two}) {
          std::vector<float> part(size_t(rows * N), Problem::kSentinel);
          gemm(p.x.data() + start * p.ldx, rows, p.ldx, p.w, part.data(), N, pool);
          EXPECT_EQ(0, std::memcmp(part.data(), full.data() + start * N, part.size() * 4))
              << core::isa_name(isa) << " rows=" << rows << " start=" << start
              << " threads=" << (pool ? pool->n_threads() : 0);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmSmallM,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16, DType::kQ8_0,
                                           DType::kQ4_K, DType::kQ6_K, DType::kQ4_0, DType::kQ4_1,
                                           DType::kQ5_0, DType::kQ5_1, DType::kQ5_K, DType::kQ3_K,
                                           DType::kQ2_K, DType::kIQ4_NL, DType::kIQ4_XS),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v & 0xff);
  p[1] = uint8_t(v >> 8);
}

// Scales that are inf or NaN (and f16 weights that are): the in-register decode must give the
// reference's bits, NaN payloads included. Q4_K's in-register path turns (d*sc)*q - dmin*m into
// one fmsub only where every scale of the k block is finite: with d = inf, q = 0 and a NaN dmin
// the product-then-difference gives the default NaN (inf * 0) where fmsub would return dmin's
// NaN, which row 3 sees. Each chain meets NaNs of one payload only, so the comparison does not
// depend on which NaN operand an FMA encoding propagates.
TEST(GemmSmallM, NonFiniteScalesAndWeightsGiveTheReferenceBits) {
  IsaScope scope;
  core::ThreadPool two(2);
  const int64_t N = 70, K = 512;
  const uint16_t kInf = 0x7c00, kNegInf = 0xfc00, kNan = 0x7e55, kSnan = 0x7c01;
  const std::vector<float> wf = random_floats(N * K, 51);
  for (DType t : {DType::kF16, DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
    const int64_t row_bytes = core::dtype_row_bytes(t, K);
    std::vector<uint8_t> rows(static_cast<size_t>(N * row_bytes));
    if (t == DType::kF16) {
      auto* h = reinterpret_cast<uint16_t*>(rows.data());
      for (int64_t i = 0; i < N * K; ++i) h[i] = core::f32_to_f16(wf[size_t(i)]);
      // One special per row (inf and -inf meet in row 4 and give the default NaN).
      h[1 * K + 3] = kSnan;
      h[2 * K + 200] = 0xfe12;  // quiet NaN, sign set
      h[3 * K + 0] = kInf;
      h[4 * K + 7] = kInf;
      h[4 * K + 9] = kNegInf;
      h[40 * K + 511] = 0x0001;  // subnormals
      h[41 * K + 100] = 0x83ff;
    } else {
      for (int64_t r = 0; r < N; ++r)
        quantize_row(t, wf.data() + r * K, rows.data() + r * row_bytes, K);
      const int64_t d_at = t == DType::kQ6_K ? 208 : 0;  // byte offset of d in a block
      const int64_t bb = core::dtype_block_bytes(t);
      put_u16(rows.data() + 1 * row_bytes + d_at, kInf);
      put_u16(rows.data() + 2 * row_bytes + bb + d_at, kNan);
      put_u16(rows.data() + 5 * row_bytes + d_at, kSnan);
      put_u16(rows.data() + 44 * row_bytes + d_at, kNegInf);
      if (t == DType::kQ4_K) {
        put_u16(rows.data() + 6 * row_bytes + 2, kNan);  // dmin
        put_u16(rows.data() + 45 * row_bytes + bb + 2, kInf);
        // Row 3, block 0: d = inf, dmin = NaN, every sc = 1, every q = 0: (inf * 0) - NaN.
        uint8_t* b = rows.data() + 3 * row_bytes;
        put_u16(b, kInf);
        put_u16(b + 2, kNan);
        for (int i = 4; i < 16; ++i) b[i] = 0x01;
        for (int i = 16; i < 144; ++i) b[i] = 0;
      }
    }
    const PackedWeight w = PackedWeight::from_rows(rows.data(), t, N, K, t);
    std::vector<float> deq(static_cast<size_t>(N * K));
    for (int64_t r = 0; r < N; ++r) w.get_row(r, deq.data() + r * K);
    const PackedWeight w_f32(deq.data(), N, K, DType::kF32);
    for (int64_t M : {int64_t(1), int64_t(3), int64_t(8), int64_t(9), int64_t(40)}) {
      const std::vector<float> x = random_floats(M * K, 52);
      std::vector<float> ref(size_t(M * N));
      gemm_ref(x.data(), M, K, w_f32, ref.data(), N);
      for (Isa isa : runnable_isas()) {
        core::set_active_isa(isa);
        for (core::ThreadPool* pool : {static_cast<core::ThreadPool*>(nullptr), &two}) {
          std::vector<float> y(size_t(M * N), Problem::kSentinel);
          gemm(x.data(), M, K, w, y.data(), N, pool);
          EXPECT_TRUE(same_bits(y, ref)) << core::dtype_name(t) << " " << core::isa_name(isa)
                                         << " M=" << M << " pool=" << (pool != nullptr);
        }
      }
    }
    // The specials do reach the outputs (rows 1 and 3 of W: columns 1 and 3 of y).
    std::vector<float> y(static_cast<size_t>(N));
    const std::vector<float> x = random_floats(K, 53);
    gemm(x.data(), 1, K, w, y.data(), N, nullptr);
    EXPECT_FALSE(std::isfinite(y[1])) << core::dtype_name(t);
    if (t == DType::kF16 || t == DType::kQ4_K) {
      EXPECT_FALSE(std::isfinite(y[3]));
    }
  }
}

// A group gives every layer the bits gemm() gives it alone: mixed types (two of one type and
// K, which share their quantized activations), one of that type and another K and a single row
// (which must not), every ISA, both arithmetics, M across the decode and prefill paths, 1 to 3
// threads. y is pre-filled with a sentinel, so a write into another layer's output or its padding
// shows.
TEST(GemmGroup, EveryLayerEqualsItsOwnGemm) {
  IsaScope scope;
  const int64_t K = 512, ldx = 600;
  struct Layer {
    DType t;
    int64_t n, k;
  };
  const Layer layers[] = {
      {DType::kQ4_K, 300, K}, {DType::kQ6_K, 70, K}, {DType::kQ4_K, 64, K}, {DType::kQ4_K, 1, 256}};
  std::vector<PackedWeight> ws;
  for (size_t i = 0; i < std::size(layers); ++i) {
    const std::vector<float> wf = random_floats(layers[i].n * layers[i].k, 900 + i);
    ws.emplace_back(wf.data(), layers[i].n, layers[i].k, layers[i].t);
  }
  for (QuantDot dot : {QuantDot::kF32, QuantDot::kInt8}) {
    set_quant_dot(dot);
    for (Isa isa : runnable_isas()) {
      core::set_active_isa(isa);
      for (int threads : {1, 2, 3}) {
        core::ThreadPool pool(threads);
        for (int64_t M : {1, 3, 9, 40}) {
          const std::vector<float> x = random_floats(M * ldx, 77 + M);
          std::vector<std::vector<float>> alone, grouped;
          std::vector<GemmOutput> outs;
          for (size_t i = 0; i < ws.size(); ++i) {
            const int64_t ldy = layers[i].n + 3;
            alone.emplace_back(size_t(M * ldy), Problem::kSentinel);
            grouped.emplace_back(size_t(M * ldy), Problem::kSentinel);
            gemm(x.data(), M, ldx, ws[i], alone[i].data(), ldy, &pool);
          }
          for (size_t i = 0; i < ws.size(); ++i)
            outs.push_back({&ws[i], grouped[i].data(), layers[i].n + 3});
          gemm_group(x.data(), M, ldx, outs, &pool);
          for (size_t i = 0; i < ws.size(); ++i) {
            EXPECT_TRUE(same_bits(alone[i], grouped[i]))
                << "layer " << i << " " << core::dtype_name(layers[i].t) << " M " << M << " "
                << core::isa_name(isa) << " threads " << threads << " " << quant_dot_name(dot);
          }
        }
      }
    }
  }
}

// The chain starts at +0.0f: (-1) * (+0) gives -0, and -0 + +0 = +0, so a kernel that starts
// from the first product instead of from +0 (or that skips the FMA) shows a sign bit here.
TEST(Gemm, NegativeZeroProductGivesPositiveZero) {
  IsaScope scope;
  const float wv[2] = {0.0f, 0.0f};  // N = 2, K = 1
  const PackedWeight w(wv, 2, 1, DType::kF32);
  const float x[1] = {-1.0f};
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    float y[2] = {1.0f, 1.0f};
    gemm(x, 1, 1, w, y, 2, nullptr);
    EXPECT_FALSE(std::signbit(y[0])) << core::isa_name(isa);
    EXPECT_FALSE(std::signbit(y[1])) << core::isa_name(isa);
  }
}

// With a = 1 + 2^-12, a*a = 1 + 2^-11 + 2^-24 exactly. The chain k = 0, 1 over x = [1, a],
// W = [-1, a] is fma(a, a, -1) = 2^-11 + 2^-24 (exact). Rounding the product first, or walking
// k backwards, loses the 2^-24 (a tie to even), so this sees an unfused or reordered chain.
TEST(Gemm, OneFusedChainInKOrder) {
  IsaScope scope;
  const float a = 1.0f + 0x1.0p-12f;
  const float wv[2] = {-1.0f, a};  // W [1][2]
  const PackedWeight w(wv, 1, 2, DType::kF32);
  const float x[2] = {1.0f, a};
  const float expect = 0x1.0p-11f + 0x1.0p-24f;
  for (Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    float y = 0.0f;
    gemm(x, 1, 2, w, &y, 1, nullptr);
    EXPECT_EQ(y, expect) << core::isa_name(isa);
  }
  float y_ref = 0.0f;
  gemm_ref(x, 1, 2, w, &y_ref, 1);
  EXPECT_EQ(y_ref, expect);
}

TEST(PackedWeight, LayoutAndRoundTripF32) {
  const int64_t N = 45, K = 7;
  const std::vector<float> wf = random_floats(N * K, 9);
  const PackedWeight w(wf.data(), N, K, DType::kF32);
  EXPECT_EQ(w.rows(), N);
  EXPECT_EQ(w.cols(), K);
  EXPECT_EQ(w.n_panels(), 2);
  std::vector<float> row(static_cast<size_t>(K));
  for (int64_t n = 0; n < N; ++n) {
    w.get_row(n, row.data());
    EXPECT_EQ(0, std::memcmp(row.data(), wf.data() + n * K, size_t(K) * 4));
    for (int64_t k = 0; k < K; ++k) {
      EXPECT_EQ(w.at(n, k), wf[size_t(n * K + k)]);
      const float* panel = static_cast<const float*>(w.panel(n / 32));
      EXPECT_EQ(panel[k * 32 + n % 32], wf[size_t(n * K + k)]);
    }
  }
  // Rows past N in the last panel are zero, so the kernels may compute them and drop them.
  const float* last = static_cast<const float*>(w.panel(1));
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t lane = N % 32; lane < 32; ++lane) EXPECT_EQ(last[k * 32 + lane], 0.0f);
  }
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(PackedWeight, Bf16RoundsToNearestEven) {
  // {input bits, expected bf16 bits}: ties go to the even neighbour, others to the nearest.
  const uint32_t cases[][2] = {
      {0x3f800000u, 0x3f80u},  // 1.0 exact
      {0x3f808000u, 0x3f80u},  // tie, 0x3f80 is even: down
      {0x3f818000u, 0x3f82u},  // tie, 0x3f81 is odd: up
      {0x3f807fffu, 0x3f80u},  // below the tie: down
      {0x3f808001u, 0x3f81u},  // above the tie: up
      {0xbf808001u, 0xbf81u},  // negative, above the tie in magnitude
      {0x7f7fffffu, 0x7f80u},  // largest finite rounds to +inf
      {0x00000001u, 0x0000u},  // smallest subnormal rounds to +0
  };
  const int64_t n = int64_t(sizeof(cases) / sizeof(cases[0]));
  std::vector<float> wf;
  for (const auto& c : cases) wf.push_back(from_bits(c[0]));
  wf.push_back(std::numeric_limits<float>::quiet_NaN());
  const PackedWeight w(wf.data(), n + 1, 1, DType::kBF16);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(to_bits(w.at(i, 0)), cases[i][1] << 16) << "case " << i;
    float row;
    w.get_row(i, &row);
    EXPECT_EQ(to_bits(row), cases[i][1] << 16) << "case " << i;
  }
  EXPECT_TRUE(std::isnan(w.at(n, 0)));
}

TEST(PackedWeight, Bf16StoresRoundedValues) {
  const int64_t N = 70, K = 33;
  const std::vector<float> wf = random_floats(N * K, 11);
  const PackedWeight w(wf.data(), N, K, DType::kBF16);
  EXPECT_EQ(w.storage_bytes(), 3 * K * 32 * 2);
  std::vector<float> row(static_cast<size_t>(K));
  for (int64_t r = 0; r < N; ++r) {
    w.get_row(r, row.data());
    for (int64_t k = 0; k < K; ++k) {
      const float want = core::bf16_to_f32(core::f32_to_bf16(wf[size_t(r * K + k)]));
      EXPECT_EQ(to_bits(w.at(r, k)), to_bits(want));
      EXPECT_EQ(to_bits(row[size_t(k)]), to_bits(want));
      const uint16_t* panel = static_cast<const uint16_t*>(w.panel(r / 32));
      EXPECT_EQ(panel[k * 32 + r % 32], core::f32_to_bf16(wf[size_t(r * K + k)]));
    }
  }
}

// Where the panel layout (docs/kernels.md, kernels/panel_layout.h) puts byte b of lane l's block
// in a k block, spelled out here apart from the code: byte-interleaved (b * 32 + l) but for each
// type's quad run (its quant bytes), where the 4 bytes of a lane's quad sit side by side, lanes in
// order; Q3_K's, Q2_K's and Q6_K's byte rows in another order (row below).
int64_t spec_offset(DType t, int64_t b, int64_t lane) {
  struct Run {
    DType type;
    int64_t begin, end;  // the quad run
  };
  static constexpr Run kRuns[] = {
      {DType::kQ8_0, 2, 34},    {DType::kQ4_0, 2, 18},   {DType::kIQ4_NL, 2, 18},
      {DType::kQ5_0, 2, 22},    {DType::kQ4_1, 4, 20},   {DType::kQ5_1, 4, 24},
      {DType::kQ4_K, 16, 144},  {DType::kQ5_K, 16, 176}, {DType::kQ6_K, 0, 192},
      {DType::kIQ4_XS, 8, 136}, {DType::kQ3_K, 0, 96},   {DType::kQ2_K, 16, 80}};
  int64_t begin = 0, end = 0;
  for (const Run& r : kRuns)
    if (r.type == t) begin = r.begin, end = r.end;
  // Where byte row r sits: GGUF's order, but Q3_K's, Q2_K's and Q6_K's rows in their reading
  // order (docs/kernels.md "Q3_K's rows in reading order" and the two after it). Q3_K: the
  // 12 scale rows, then per slot quad g its A rows and its C rows, then the 32 B rows, then d.
  // Q2_K: for each half h and each sub = 0, 1 the 16 qs rows of inputs 128h + 32t + 16sub ..
  // + 15 (rows 16 + 32h + 16sub ..), then the scale rows of their sub-blocks 8h + 2t + sub,
  // t = 0 .. 3; then d and dmin. Q6_K: for each half h and each sub, for each of its 4 input
  // quads g = 4sub .. 4sub + 3 the ql quad 64h + 4g, the ql quad 64h + 32 + 4g and the qh quad
  // 128 + 32h + 4g, then the scale rows 192 + 8h + 2t + sub; then d.
  static const std::vector<int64_t> q6_k_rows = [] {
    std::vector<int64_t> at(210);
    int64_t next = 0;
    for (int h = 0; h < 2; ++h) {
      for (int sub = 0; sub < 2; ++sub) {
        for (int g = 4 * sub; g < 4 * sub + 4; ++g) {
          for (int quad : {64 * h + 4 * g, 64 * h + 32 + 4 * g, 128 + 32 * h + 4 * g})
            for (int i = 0; i < 4; ++i) at[size_t(quad + i)] = next++;
        }
        for (int t = 0; t < 4; ++t) at[size_t(192 + 8 * h + 2 * t + sub)] = next++;
      }
    }
    for (int r = 208; r < 210; ++r) at[size_t(r)] = next++;
    return at;
  }();
  static const std::vector<int64_t> q2_k_rows = [] {
    std::vector<int64_t> at(84);
    int64_t next = 0;
    for (int h = 0; h < 2; ++h) {
      for (int sub = 0; sub < 2; ++sub) {
        for (int i = 0; i < 16; ++i) at[size_t(16 + 32 * h + 16 * sub + i)] = next++;
        for (int t = 0; t < 4; ++t) at[size_t(8 * h + 2 * t + sub)] = next++;
      }
    }
    for (int r = 80; r < 84; ++r) at[size_t(r)] = next++;
    return at;
  }();
  const auto row = [t](int64_t r) -> int64_t {
    if (t == DType::kQ2_K) return q2_k_rows[size_t(r)];
    if (t == DType::kQ6_K) return q6_k_rows[size_t(r)];
    if (t != DType::kQ3_K || r >= 108) return r;
    if (r >= 96) return r - 96;
    if (r < 32) return 12 + r / 4 * 8 + r % 4;
    if (r < 64) return 76 + (r - 32);
    return 16 + (r - 64) / 4 * 8 + r % 4;
  };
  if (b < begin || b >= end) return row(b) * 32 + lane;
  const int64_t q = begin + (b - begin) / 4 * 4;
  return row(q) * 32 + 4 * lane + (b - q);
}

// A GGUF block as a panel keeps it (docs/kernels.md "Q3_K's codes in a panel", spelled out here
// bit by bit apart from the code): every type's bytes as they are, but Q3_K's hmask (bytes 0-31)
// and qs (32-95), whose 3-bit codes are re-cut into three bytes per input slot i: A (byte i) the
// codes of inputs i and 32 + i at bits 0-2 and 3-5 and the low pair of input 64 + i's at 6-7; B
// (byte 32 + i) the same for inputs 128 + i, 160 + i, 192 + i; C (byte 64 + i) the codes of
// inputs 96 + i and 224 + i at bits 0-2 and 3-5, the high bits of inputs 64 + i's and
// 192 + i's at bits 6 and 7. Input 128h + 32t + i's code: bits 2t, 2t + 1 of qs[32h + i], and
// bit 4h + t of hmask[i] as its bit 2.
std::vector<uint8_t> panel_block(DType t, const uint8_t* gguf, int64_t bb) {
  std::vector<uint8_t> out(gguf, gguf + bb);
  if (t != DType::kQ3_K) return out;
  for (int i = 0; i < 32; ++i) {
    auto code = [&](int input) {
      const int h = input / 128, tt = (input % 128) / 32;
      return ((gguf[32 + 32 * h + i] >> (2 * tt)) & 3) | ((gguf[i] >> (4 * h + tt)) & 1) << 2;
    };
    out[size_t(i)] = uint8_t(code(i) | code(32 + i) << 3 | (code(64 + i) & 3) << 6);
    out[size_t(32 + i)] = uint8_t(code(128 + i) | code(160 + i) << 3 | (code(192 + i) & 3) << 6);
    out[size_t(64 + i)] = uint8_t(code(96 + i) | code(224 + i) << 3 | (code(64 + i) >> 2) << 6 |
                                  (code(192 + i) >> 2) << 7);
  }
  return out;
}

// Quantized storage keeps a GGUF row's blocks bit for bit: from_rows() of quantized rows puts
// each (row, block)'s bytes (panel_block: Q3_K's codes re-cut) in the panel layout
// (spec_offset), and get_row() / at() decode them as dequantize_row() does. Rows past N in the
// last panel are all-zero blocks.
TEST(PackedWeight, QuantizedKeepsBlocksAndDecodesThem) {
  for (DType t :
       {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kIQ4_NL,
        DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS}) {
    const int64_t N = 40, K = 512, be = core::dtype_block_elements(t);
    const int64_t bb = core::dtype_block_bytes(t), row_bytes = core::dtype_row_bytes(t, K);
    const std::vector<float> wf = random_floats(N * K, 21);
    std::vector<uint8_t> rows(static_cast<size_t>(N * row_bytes));
    for (int64_t r = 0; r < N; ++r)
      quantize_row(t, wf.data() + r * K, rows.data() + r * row_bytes, K);
    const PackedWeight w = PackedWeight::from_rows(rows.data(), t, N, K, t);
    EXPECT_EQ(w.dtype(), t);
    EXPECT_EQ(w.storage_bytes(), 2 * 32 * row_bytes) << core::dtype_name(t);
    std::vector<float> want(static_cast<size_t>(K)), got(static_cast<size_t>(K));
    for (int64_t r = 0; r < N; ++r) {
      for (int64_t kb = 0; kb < K / be; ++kb) {
        const uint8_t* kblock = static_cast<const uint8_t*>(w.panel(r / 32)) + kb * 32 * bb;
        const std::vector<uint8_t> want_block =
            panel_block(t, &rows[size_t(r * row_bytes + kb * bb)], bb);
        for (int64_t b = 0; b < bb; ++b)
          ASSERT_EQ(kblock[spec_offset(t, b, r % 32)], want_block[size_t(b)])
              << core::dtype_name(t) << " row " << r << " block " << kb << " byte " << b;
      }
      dequantize_row(t, rows.data() + r * row_bytes, want.data(), K);
      w.get_row(r, got.data());
      EXPECT_TRUE(same_bits(got, want)) << core::dtype_name(t) << " row " << r;
      for (int64_t k : {int64_t(0), int64_t(1), be - 1, be, K - 1})
        EXPECT_EQ(to_bits(w.at(r, k)), to_bits(want[size_t(k)]));
    }
    const uint8_t* last = static_cast<const uint8_t*>(w.panel(1));
    for (int64_t kb = 0; kb < K / be; ++kb) {
      for (int64_t lane = N % 32; lane < 32; ++lane) {
        for (int64_t b = 0; b < bb; ++b) EXPECT_EQ(last[kb * 32 * bb + spec_offset(t, b, lane)], 0);
      }
    }
    // The f32 constructor quantizes with quantize_row(): the same blocks.
    const PackedWeight q(wf.data(), N, K, t);
    EXPECT_EQ(0, std::memcmp(q.panel(0), w.panel(0), size_t(w.storage_bytes())));
  }
}

// Panels cut from a HugePageArena (the model loader's way) hold the bytes a weight of its own
// holds, a plain type's lanes past N zero as well; a weight keeps the arena alive, and a copy
// shares its panels.
TEST(PackedWeight, InAnArenaTheSameBytes) {
  auto arena = std::make_shared<core::HugePageArena>();
  std::vector<PackedWeight> in_arena, own;
  for (DType t : {DType::kQ4_K, DType::kQ8_0, DType::kBF16, DType::kF32}) {
    const int64_t N = 40, K = 512;
    const std::vector<float> wf = random_floats(N * K, 23);
    in_arena.emplace_back(wf.data(), N, K, t, arena);
    own.emplace_back(wf.data(), N, K, t);
  }
  int64_t total = 0;
  for (const PackedWeight& w : in_arena) total += w.storage_bytes();
  EXPECT_EQ(arena->allocated_bytes(), size_t(total));
  arena.reset();  // the weights hold it now
  const std::vector<PackedWeight> copies = in_arena;
  for (size_t i = 0; i < own.size(); ++i) {
    ASSERT_EQ(in_arena[i].storage_bytes(), own[i].storage_bytes());
    EXPECT_EQ(0, std::memcmp(in_arena[i].panel(0), own[i].panel(0), size_t(own[i].storage_bytes())))
        << core::dtype_name(own[i].dtype());
    EXPECT_EQ(copies[i].panel(0), in_arena[i].panel(0));
  }
}

// Rows made a few panels at a time pack to the bytes of the whole matrix: every type kind, N
// past a chunk and not a panel multiple, an arena or not.
TEST(PackedWeight, FromF32RowsIsTheWholeMatrixsBytes) {
  auto arena = std::make_shared<core::HugePageArena>();
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kQ8_0, DType::kQ4_K}) {
    for (int64_t N : {int64_t(7), int64_t(300), int64_t(544)}) {
      const int64_t K = 256;
      const std::vector<float> wf = random_floats(N * K, 41 + N);
      const PackedWeight whole(wf.data(), N, K, t);
      int64_t next = 0;  // the rows are asked for in order, each once
      const PackedWeight by_rows = PackedWeight::from_f32_rows(
          N, K, t, N == 300 ? arena : nullptr, [&](int64_t r0, int64_t r1, float* out) {
            EXPECT_EQ(r0, next);
            next = r1;
            std::memcpy(out, wf.data() + r0 * K, size_t((r1 - r0) * K) * sizeof(float));
          });
      EXPECT_EQ(next, N);
      ASSERT_EQ(by_rows.storage_bytes(), whole.storage_bytes());
      EXPECT_EQ(0, std::memcmp(by_rows.panel(0), whole.panel(0), size_t(whole.storage_bytes())))
          << core::dtype_name(t) << " N " << N;
    }
  }
}

// Plain rows convert on the way in: f32 rows stored as f16 round to nearest even, bf16 rows
// stored as f32 are exact.
TEST(PackedWeight, FromPlainRowsConverts) {
  const int64_t N = 33, K = 20;
  const std::vector<float> wf = random_floats(N * K, 31);
  const PackedWeight h = PackedWeight::from_rows(wf.data(), DType::kF32, N, K, DType::kF16);
  std::vector<uint16_t> b16(static_cast<size_t>(N * K));
  for (size_t i = 0; i < b16.size(); ++i) b16[i] = core::f32_to_bf16(wf[i]);
  const PackedWeight b = PackedWeight::from_rows(b16.data(), DType::kBF16, N, K, DType::kF32);
  EXPECT_EQ(h.storage_bytes(), 2 * K * 32 * 2);
  EXPECT_EQ(b.storage_bytes(), 2 * K * 32 * 4);
  for (int64_t r = 0; r < N; ++r) {
    for (int64_t k = 0; k < K; ++k) {
      const size_t i = size_t(r * K + k);
      EXPECT_EQ(to_bits(h.at(r, k)), to_bits(core::f16_to_f32(core::f32_to_f16(wf[i]))));
      EXPECT_EQ(to_bits(b.at(r, k)), to_bits(core::bf16_to_f32(b16[i])));
    }
  }
}

// unpack_panel() (the GEMM's dequantizer, vectorised per ISA) gives at()'s bits on every ISA,
// for every storage type; f16 includes subnormals, infinities, -0 and a signalling NaN, whose
// payload must survive unquieted as in core::f16_to_f32.
TEST(PackedWeight, UnpackPanelEqualsAtOnEveryIsa) {
  IsaScope scope;
  const int64_t N = 50, K = 512;
  std::vector<float> wf = random_floats(N * K, 41);
  // Rows 3-5 tiny: their blocks' f16 scales are subnormal.
  for (int64_t i = 3 * K; i < 6 * K; ++i) wf[size_t(i)] *= 1e-4f;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kQ8_0, DType::kQ4_K, DType::kQ6_K,
                  DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ5_K,
                  DType::kQ3_K, DType::kQ2_K, DType::kIQ4_NL, DType::kIQ4_XS}) {
    PackedWeight w(wf.data(), N, K, t);
    if (t == DType::kF16) {
      std::vector<uint16_t> h(static_cast<size_t>(N * K));
      for (size_t i = 0; i < h.size(); ++i) h[i] = core::f32_to_f16(wf[i]);
      const uint16_t specials[] = {0x0001, 0x83ff, 0x7c00, 0xfc00, 0x8000, 0x7c01, 0xfe12, 0x7bff};
      for (size_t i = 0; i < sizeof(specials) / 2; ++i) h[i * 37] = specials[i];
      w = PackedWeight::from_rows(h.data(), DType::kF16, N, K, DType::kF16);
    }
    for (Isa isa : runnable_isas()) {
      core::set_active_isa(isa);
      for (int64_t p = 0; p < w.n_panels(); ++p) {
        for (int64_t k0 : {int64_t(0), int64_t(256)}) {
          std::vector<float> out(static_cast<size_t>(256 * 32));
          w.unpack_panel(p, k0, 256, out.data());
          for (int64_t k = 0; k < 256; ++k) {
            for (int64_t lane = 0; lane < 32 && p * 32 + lane < N; ++lane) {
              ASSERT_EQ(to_bits(out[size_t(k * 32 + lane)]), to_bits(w.at(p * 32 + lane, k0 + k)))
                  << core::dtype_name(t) << " " << core::isa_name(isa) << " row " << p * 32 + lane
                  << " col " << k0 + k;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace anchorage::kernels

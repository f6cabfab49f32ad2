// Tests for kernels::gemm and PackedWeight: every ISA and every blocking gives the bits of the
// plain reference (kernels/ref/gemm_ref.h), compared with memcmp.
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/packed_weight.h"
#include "kernels/ref/gemm_ref.h"

namespace anchorage::kernels {
namespace {

using core::DType;
using core::Isa;

std::vector<float> random_floats(int64_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& f : v) f = float(rng.normal());
  return v;
}

// Restores the active ISA when a test ends, whatever it set.
class IsaScope {
 public:
  IsaScope() : saved_(core::active_isa()) {}
  ~IsaScope() { core::set_active_isa(saved_); }

 private:
  Isa saved_;
};

// The ISAs this CPU can run, lowest first.
std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (int(isa) <= int(core::detected_isa())) out.push_back(isa);
  }
  return out;
}

// One GEMM problem: x [M][ldx], W [N][K], y [M][ldy] pre-filled with a sentinel so a write
// past column N (or into the ldy padding) is seen.
struct Problem {
  int64_t M, K, N, ldx, ldy;
  std::vector<float> x;
  PackedWeight w;

  Problem(int64_t m, int64_t k, int64_t n, DType dtype, uint64_t seed, int64_t x_pad = 0,
          int64_t y_pad = 0)
      : M(m), K(k), N(n), ldx(k + x_pad), ldy(n + y_pad) {
    x = random_floats(M * ldx, seed);
    const std::vector<float> wf = random_floats(N * K, seed + 1000);
    w = PackedWeight(wf.data(), N, K, dtype);
  }

  std::vector<float> run(core::ThreadPool* pool) const {
    std::vector<float> y(size_t(M * ldy), kSentinel);
    gemm(x.data(), M, ldx, w, y.data(), ldy, pool);
    return y;
  }
  std::vector<float> run_ref() const {
    std::vector<float> y(size_t(M * ldy), kSentinel);
    gemm_ref(x.data(), M, ldx, w, y.data(), ldy);
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
    const Problem p(300, 270, 200, GetParam(), 77);
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
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmShapes, ::testing::Values(DType::kF32, DType::kBF16),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

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

}  // namespace
}  // namespace anchorage::kernels

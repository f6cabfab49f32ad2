// Tests for weights made over a file's rows (PackedWeight::over_rows()): pack() must make
// from_rows()' bytes, on one thread or a pool; gemm() packs a weight it finds without panels and
// gives the bits of the weight packed at load (memcmp), for every storage type; and gemm() calls
// while another thread packs the same weights read the same all along.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/kernel_testing.h"
#include "kernels/packed_weight.h"
#include "kernels/quant.h"
#include "kernels/random_floats.h"

namespace anchorage::kernels {
namespace {

using core::DType;

constexpr DType kTypes[] = {DType::kF32,  DType::kBF16,   DType::kF16,   DType::kQ8_0,
                            DType::kQ4_K, DType::kQ6_K,   DType::kQ4_0,  DType::kQ4_1,
                            DType::kQ5_0, DType::kQ5_1,   DType::kQ5_K,  DType::kQ3_K,
                            DType::kQ2_K, DType::kIQ4_NL, DType::kIQ4_XS};

using testing::same_bits;

// A tensor as a GGUF file stores it: n rows of k elements of t, back to back.
std::vector<uint8_t> file_rows(DType t, int64_t n, int64_t k, uint64_t seed) {
  const std::vector<float> wf = random_floats(n * k, seed);
  const int64_t rb = core::dtype_row_bytes(t, k);
  std::vector<uint8_t> rows(size_t(n * rb));
  for (int64_t r = 0; r < n; ++r) quantize_row(t, wf.data() + r * k, rows.data() + r * rb, k);
  return rows;
}

std::vector<float> run(const PackedWeight& w, const std::vector<float>& x, int64_t M,
                       core::ThreadPool* pool) {
  const int64_t ldy = w.rows() + 5;
  std::vector<float> y(size_t(M * ldy), -7.25f);  // columns past N must stay untouched
  gemm(x.data(), M, w.cols(), w, y.data(), ldy, pool);
  return y;
}

// gemm() packs a weight it finds without panels (with its pool), then runs: the packed
// weight's bits, and the weight stays packed. N = 300: ten panels, the last partial; K = 512:
// two K-quant blocks.
TEST(PackedWeightOverRows, GemmPacksFirstAndGivesThePackedWeightsBits) {
  const int64_t N = 300, K = 512;
  core::ThreadPool two(2);
  for (DType t : kTypes) {
    const std::vector<uint8_t> rows = file_rows(t, N, K, 5 + uint64_t(t));
    const PackedWeight packed = PackedWeight::from_rows(rows.data(), t, N, K, t);
    for (core::ThreadPool* pool : {static_cast<core::ThreadPool*>(nullptr), &two}) {
      for (int64_t M : {1, 37}) {
        const PackedWeight lazy = PackedWeight::over_rows(rows.data(), t, N, K, nullptr);
        ASSERT_FALSE(lazy.packed());
        const std::vector<float> x = random_floats(M * K, 100 + M);
        EXPECT_TRUE(same_bits(run(lazy, x, M, pool), run(packed, x, M, pool)))
            << core::dtype_name(t) << " M " << M << " threads " << (pool ? 2 : 1);
        ASSERT_TRUE(lazy.packed());
        EXPECT_EQ(0, std::memcmp(lazy.panels(), packed.panels(), size_t(packed.storage_bytes())))
            << core::dtype_name(t) << " threads " << (pool ? 2 : 1);
      }
    }
  }
}

// pack() makes the bytes from_rows() makes (a plain type's lanes past N zero too), on one thread
// or split over a pool; a copy made before shares the switch; get_row() and at() give the
// stored values in both forms.
TEST(PackedWeightOverRows, PackMakesFromRowsBytes) {
  auto arena = std::make_shared<core::HugePageArena>();
  for (DType t : kTypes) {
    for (int64_t N : {int64_t(7), int64_t(64), int64_t(300)}) {
      const int64_t K = 256;
      auto rows = std::make_shared<std::vector<uint8_t>>(file_rows(t, N, K, 50 + N));
      const PackedWeight want = PackedWeight::from_rows(rows->data(), t, N, K, t);
      const PackedWeight lazy =
          PackedWeight::over_rows(rows->data(), t, N, K, rows, N == 64 ? arena : nullptr);
      const PackedWeight copy = lazy;
      std::vector<float> a(static_cast<size_t>(K)), b(static_cast<size_t>(K));
      for (int64_t r : {int64_t(0), N / 2, N - 1}) {
        want.get_row(r, a.data());
        lazy.get_row(r, b.data());
        EXPECT_TRUE(same_bits(a, b)) << core::dtype_name(t) << " row " << r;
        for (int64_t k : {int64_t(0), int64_t(31), int64_t(32), int64_t(200), K - 1}) {
          const float u = lazy.at(r, k), v = want.at(r, k);
          EXPECT_EQ(std::memcmp(&u, &v, 4), 0) << core::dtype_name(t) << " " << r << "," << k;
        }
      }
      core::ThreadPool two(2);
      lazy.pack(N == 300 ? &two : nullptr);
      ASSERT_TRUE(copy.packed());
      EXPECT_EQ(copy.panels(), lazy.panels());
      EXPECT_EQ(0, std::memcmp(lazy.panels(), want.panels(), size_t(want.storage_bytes())))
          << core::dtype_name(t) << " N " << N;
      lazy.pack();  // a second pack() keeps the panels
      EXPECT_EQ(copy.panels(), lazy.panels());
      for (int64_t r : {int64_t(0), N - 1}) {
        want.get_row(r, a.data());
        copy.get_row(r, b.data());
        EXPECT_TRUE(same_bits(a, b)) << core::dtype_name(t) << " row " << r;
      }
    }
  }
}

// Packing on one thread while another runs gemm_group() over the same weights (each call packs
// what it finds unpacked, or waits for the packer's pack() of it): every call's bits are the
// packed weights'.
TEST(PackedWeightOverRows, PackingDuringGemmChangesNoBit) {
  const int64_t K = 512;
  const DType types[] = {DType::kQ4_K, DType::kQ6_K, DType::kBF16, DType::kQ8_0};
  std::vector<std::vector<uint8_t>> rows;
  std::vector<PackedWeight> packed;
  for (size_t i = 0; i < std::size(types); ++i) {
    const int64_t n = 96 + 64 * int64_t(i);
    rows.push_back(file_rows(types[i], n, K, 300 + i));
    packed.push_back(PackedWeight::from_rows(rows[i].data(), types[i], n, K, types[i]));
  }
  core::ThreadPool pool(2);
  for (int64_t M : {1, 12}) {
    const std::vector<float> x = random_floats(M * K, 9 + M);
    std::vector<std::vector<float>> want(std::size(types));
    std::vector<GemmOutput> outs(std::size(types));
    for (size_t i = 0; i < std::size(types); ++i) {
      want[i].assign(size_t(M * packed[i].rows()), 0.0f);
      outs[i] = {&packed[i], want[i].data(), packed[i].rows()};
    }
    gemm_group(x.data(), M, K, outs, &pool);
    for (int round = 0; round < 4; ++round) {
      std::vector<PackedWeight> lazy;
      for (size_t i = 0; i < std::size(types); ++i)
        lazy.push_back(
            PackedWeight::over_rows(rows[i].data(), types[i], packed[i].rows(), K, nullptr));
      std::atomic<bool> go{false};
      std::thread packer([&] {
        while (!go.load()) std::this_thread::yield();
        for (const PackedWeight& w : lazy) w.pack();
      });
      bool all_packed = false;
      for (int call = 0; call < 200 && !all_packed; ++call) {
        if (call == 1) go.store(true);
        std::vector<std::vector<float>> got(std::size(types));
        for (size_t i = 0; i < std::size(types); ++i) {
          got[i].assign(size_t(M * lazy[i].rows()), 0.0f);
          outs[i] = {&lazy[i], got[i].data(), lazy[i].rows()};
        }
        all_packed = lazy.back().packed();
        gemm_group(x.data(), M, K, outs, &pool);
        bool same = true;
        for (size_t i = 0; i < std::size(types); ++i) {
          EXPECT_TRUE(same_bits(got[i], want[i]))
              << "M " << M << " layer " << i << " call " << call;
          same = same && same_bits(got[i], want[i]);
        }
        if (!same) break;  // and join the packer below
      }
      go.store(true);
      packer.join();
      for (const PackedWeight& w : lazy) EXPECT_TRUE(w.packed());
    }
  }
}

}  // namespace
}  // namespace anchorage::kernels

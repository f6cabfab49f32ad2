// Tests for kernels::attention and kv_store: the tiled kernel against the double-precision
// reference (tolerance), and every exactness promise of attention.h with memcmp: chunkings of
// the same rows (T = 1, 7, 64, 1024 at varying pos0), thread counts, ISAs, stale or poisoned
// cache rows past a row's position, and the cache's capacity.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/kernel_testing.h"
#include "kernels/ref/attention_ref.h"

namespace anchorage::kernels {
namespace {

using core::DType;
using testing::random_floats;
using testing::same_bits;

// What the cache holds before a sequence writes it: rows not yet written (or left by an
// earlier sequence) must never reach a result.
enum class Poison { kZero, kFinite, kNaN, kPosInf, kNegInf, kNegZero };

// A sequence of n tokens: q [n][n_q*D], k, v [n][n_kv*D] (row pitches padded by 16 floats so a
// kernel that ignores ld shows).
struct Sequence {
  AttentionDims dims;
  int64_t n, ldq, ldk;
  std::vector<float> q, k, v;

  Sequence(const AttentionDims& d, int64_t n_tokens, uint64_t seed, double q_scale = 2.0)
      : dims(d), n(n_tokens), ldq(d.n_q * d.D + 16), ldk(d.n_kv * d.D + 16) {
    q = random_floats(n * ldq, seed, q_scale);
    k = random_floats(n * ldk, seed + 1);
    v = random_floats(n * ldk, seed + 2);
  }
};

// The K and V buffers of one layer, filled with a poison.
struct Cache {
  std::vector<uint8_t> K, V;

  Cache(const AttentionDims& d, Poison poison, uint64_t seed) {
    const int64_t elems = d.n_kv * d.D * d.capacity;
    const int64_t bytes = elems * core::dtype_size(d.kv_dtype);
    K.resize(size_t(bytes));
    V.resize(size_t(bytes));
    std::vector<float> junk = random_floats(2 * elems, seed, 50.0);
    for (int64_t i = 0; i < 2 * elems; ++i) {
      float x = 0.0f;
      switch (poison) {
        case Poison::kZero:
          x = 0.0f;
          break;
        case Poison::kFinite:
          x = junk[size_t(i)];
          break;
        case Poison::kNaN:
          x = std::nanf("");
          break;
        case Poison::kPosInf:
          x = INFINITY;
          break;
        case Poison::kNegInf:
          x = -INFINITY;
          break;
        case Poison::kNegZero:
          x = -0.0f;
          break;
      }
      std::vector<uint8_t>& buf = i < elems ? K : V;
      const int64_t at = i < elems ? i : i - elems;
      if (d.kv_dtype == DType::kBF16) {
        const uint16_t h = core::f32_to_bf16(x);
        std::memcpy(buf.data() + at * 2, &h, 2);
      } else {
        std::memcpy(buf.data() + at * 4, &x, 4);
      }
    }
  }
};

// Runs the sequence through the cache in chunks of the given sizes (the last one repeats until
// every token is done), as the engine does: store the chunk's rows, then attend. Returns the
// outputs [n][n_q*D].
std::vector<float> run_chunks(const Sequence& s, const std::vector<int64_t>& chunks, Poison poison,
                              core::ThreadPool* pool) {
  Cache cache(s.dims, poison, 77);
  const int64_t width = s.dims.n_q * s.dims.D;
  std::vector<float> out(size_t(s.n * width), 0.0f);
  int64_t pos = 0;
  for (size_t c = 0; pos < s.n; ++c) {
    const int64_t want = chunks[c < chunks.size() ? c : chunks.size() - 1];
    const int64_t T = want < s.n - pos ? want : s.n - pos;
    kv_store(s.dims, s.k.data() + pos * s.ldk, s.ldk, s.v.data() + pos * s.ldk, s.ldk, T, pos,
             cache.K.data(), cache.V.data());
    attention(s.dims, s.q.data() + pos * s.ldq, s.ldq, T, pos, cache.K.data(), cache.V.data(),
              out.data() + pos * width, width, pool);
    pos += T;
  }
  return out;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

AttentionDims make_dims(int64_t n_q, int64_t n_kv, int64_t D, int64_t cap, DType dt) {
  AttentionDims d;
  d.n_q = n_q;
  d.n_kv = n_kv;
  d.D = D;
  d.capacity = cap;
  d.kv_dtype = dt;
  return d;
}

class AttentionDtype : public ::testing::TestWithParam<DType> {};

// The kernel's f32 online softmax against the double reference on the same cache contents
// (so bf16 rounding is not part of the error). Bound: 5e-6 of the largest |V| (the measured
// worst case here is 9.3e-7; a wrong mask, scale or head mapping gives errors near 1).
TEST_P(AttentionDtype, MatchesReference) {
  struct Shape {
    int64_t n_q, n_kv, D, n, cap;
  };
  // cap not a multiple of 32, so the last rows' block crosses the capacity (partial K loads).
  for (Shape sh : {Shape{4, 2, 32, 300, 300}, Shape{4, 1, 64, 100, 110}, Shape{2, 2, 128, 70, 75},
                   Shape{8, 2, 256, 40, 64}}) {
    const AttentionDims dims = make_dims(sh.n_q, sh.n_kv, sh.D, sh.cap, GetParam());
    Sequence s(dims, sh.n, 11 + uint64_t(sh.D));
    Cache cache(dims, Poison::kFinite, 5);
    kv_store(dims, s.k.data(), s.ldk, s.v.data(), s.ldk, s.n, 0, cache.K.data(), cache.V.data());
    const int64_t width = dims.n_q * dims.D;
    std::vector<float> got(size_t(s.n * width)), want(size_t(s.n * width));
    attention(dims, s.q.data(), s.ldq, s.n, 0, cache.K.data(), cache.V.data(), got.data(), width,
              nullptr);
    attention_ref(dims, s.q.data(), s.ldq, s.n, 0, cache.K.data(), cache.V.data(), want.data(),
                  width, nullptr);
    double vmax = 0.0, err = 0.0;
    for (float x : s.v) vmax = std::fmax(vmax, std::fabs(x));
    for (size_t i = 0; i < got.size(); ++i) err = std::fmax(err, std::fabs(got[i] - want[i]));
    EXPECT_LE(err, 5e-6 * vmax) << "D " << sh.D << " n_q " << sh.n_q << " n_kv " << sh.n_kv;
  }
}

// Rows of the same sequence computed in chunks of 1024, 64, 7 and 1 tokens (and starting at
// odd positions) carry the same bits as one call over every row. The second shape (8 query
// heads on one KV head, D = 256) gives decode tiles of 8 rows and prefill tiles of 16 positions.
TEST_P(AttentionDtype, ChunkingIsBitExact) {
  struct Shape {
    int64_t n_q, n_kv, D, n;
  };
  core::ThreadPool pool(2);
  for (Shape sh : {Shape{4, 2, 32, 1100}, Shape{8, 1, 256, 300}}) {
    const AttentionDims dims = make_dims(sh.n_q, sh.n_kv, sh.D, sh.n + 13, GetParam());
    Sequence s(dims, sh.n, 3);
    const std::vector<float> whole = run_chunks(s, {sh.n}, Poison::kFinite, &pool);
    ASSERT_TRUE(all_finite(whole));
    const std::vector<std::vector<int64_t>> plans = {{1024}, {37, 1024}, {64},
                                                     {7},    {1},        {5, 64, 1, 7, 1024}};
    for (const auto& plan : plans) {
      EXPECT_TRUE(same_bits(run_chunks(s, plan, Poison::kFinite, &pool), whole))
          << "D " << sh.D << ", chunks from " << plan[0];
    }
  }
}

// Rows not yet written, or left by an earlier sequence, change nothing: with T = 1 and T = 7
// chunks every row's diagonal block holds such rows past its position.
TEST_P(AttentionDtype, StaleRowsChangeNothing) {
  const AttentionDims dims = make_dims(4, 2, 64, 200, GetParam());
  Sequence s(dims, 181, 9);
  const std::vector<float> clean = run_chunks(s, {181}, Poison::kZero, nullptr);
  ASSERT_TRUE(all_finite(clean));
  for (Poison p :
       {Poison::kFinite, Poison::kNaN, Poison::kPosInf, Poison::kNegInf, Poison::kNegZero}) {
    for (int64_t chunk : {1, 7, 181}) {
      EXPECT_TRUE(same_bits(run_chunks(s, {chunk}, p, nullptr), clean))
          << "poison " << int(p) << ", chunk " << chunk;
    }
  }
}

// Threads split rows and KV heads, never keys: 1 and 2 threads, prefill and decode.
TEST_P(AttentionDtype, ThreadsAreBitExact) {
  const AttentionDims dims = make_dims(6, 2, 64, 600, GetParam());
  Sequence s(dims, 600, 21);
  core::ThreadPool one(1), two(2);
  for (int64_t chunk : {1, 1024}) {
    const std::vector<float> a = run_chunks(s, {chunk}, Poison::kFinite, &one);
    EXPECT_TRUE(same_bits(run_chunks(s, {chunk}, Poison::kFinite, &two), a)) << chunk;
    EXPECT_TRUE(same_bits(run_chunks(s, {chunk}, Poison::kFinite, nullptr), a)) << chunk;
  }
}

// Scalar, AVX2 and AVX-512 builds of the kernel give the same bits. The vector builds hold
// bf16 keys and columns in their own lane order (V16::load_bf16_pairs) where the scalar one
// keeps element order, so this also checks that order is undone: D = 48 has a 16-column
// width that takes the element-order columns (NC = 1), and one-token chunks past 4 key blocks take
// the decode tile's multi-block scores (score_wide).
TEST_P(AttentionDtype, IsasAreBitExact) {
  for (int64_t D : {32, 48, 128}) {
    const AttentionDims dims = make_dims(4, 2, D, 300, GetParam());
    Sequence s(dims, 300, 31 + uint64_t(D));
    testing::expect_same_bits_every_isa(
        [&] { return run_chunks(s, {300}, Poison::kFinite, nullptr); });
    testing::expect_same_bits_every_isa([&] { return run_chunks(s, {7}, Poison::kNaN, nullptr); });
    testing::expect_same_bits_every_isa([&] {
      return run_chunks(s, {200, 1}, Poison::kNaN, nullptr);
    });
  }
}

// The capacity (K's row pitch) is layout only: a row's bits do not depend on it, including
// when its key block crosses the end of the cache (partial K loads).
TEST_P(AttentionDtype, CapacityChangesNothing) {
  Sequence s(make_dims(2, 1, 32, 0, GetParam()), 100, 41);
  std::vector<float> first;
  for (int64_t cap : {100, 101, 128, 300}) {
    s.dims.capacity = cap;
    std::vector<float> out = run_chunks(s, {1024}, Poison::kNaN, nullptr);
    if (first.empty()) {
      first = out;
      EXPECT_TRUE(all_finite(first));
    } else {
      EXPECT_TRUE(same_bits(out, first)) << "capacity " << cap;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cache, AttentionDtype, ::testing::Values(DType::kF32, DType::kBF16),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

// Query head h reads KV head h / (n_q / n_kv): with every V row of head j equal to j + 1, the
// output of head h is j + 1 whatever the softmax weights are.
TEST(Attention, GqaMapping) {
  const AttentionDims dims = make_dims(6, 3, 32, 64, DType::kF32);
  Sequence s(dims, 50, 51);
  for (int64_t t = 0; t < s.n; ++t) {
    for (int64_t j = 0; j < dims.n_kv; ++j) {
      for (int64_t d = 0; d < dims.D; ++d) s.v[size_t(t * s.ldk + j * dims.D + d)] = float(j + 1);
    }
  }
  const std::vector<float> out = run_chunks(s, {50}, Poison::kFinite, nullptr);
  const int64_t width = dims.n_q * dims.D;
  for (int64_t t = 0; t < s.n; ++t) {
    for (int64_t h = 0; h < dims.n_q; ++h) {
      const float want = float(h / 2 + 1);
      for (int64_t d = 0; d < dims.D; ++d) {
        ASSERT_NEAR(out[size_t(t * width + h * dims.D + d)], want, 1e-5f * want)
            << "t " << t << " h " << h;
      }
    }
  }
}

// Position 0 attends to itself only: the output is exactly its own V row (p = 1, l = 1).
TEST(Attention, FirstPositionIsItsValue) {
  const AttentionDims dims = make_dims(2, 1, 16, 40, DType::kF32);
  Sequence s(dims, 1, 61);
  const std::vector<float> out = run_chunks(s, {1}, Poison::kNaN, nullptr);
  for (int64_t h = 0; h < 2; ++h) {
    EXPECT_EQ(0, std::memcmp(out.data() + h * dims.D, s.v.data(), size_t(dims.D) * 4));
  }
}

// K is stored transposed ([n_kv][D][capacity]), V row-major ([n_kv][capacity][D]); only rows
// [pos0, pos0 + T) are written; bf16 rounds to nearest even.
TEST(KvStore, LayoutAndRounding) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const AttentionDims dims = make_dims(4, 2, 32, 50, dt);
    Sequence s(dims, 9, 71);
    // Ties: 1 + 2^-8 rounds down to 1 (even), 1 + 3 * 2^-8 up to 1 + 2^-6.
    s.k[0] = 1.00390625f;
    s.k[1] = 1.01171875f;
    Cache cache(dims, Poison::kNaN, 1);
    kv_store(dims, s.k.data(), s.ldk, s.v.data(), s.ldk, s.n, 20, cache.K.data(), cache.V.data());
    for (int64_t j = 0; j < dims.n_kv; ++j) {
      for (int64_t d = 0; d < dims.D; ++d) {
        for (int64_t t = 0; t < dims.capacity; ++t) {
          const float k = kv_at(dims, cache.K.data(), true, j, d, t);
          const float v = kv_at(dims, cache.V.data(), false, j, d, t);
          if (t < 20 || t >= 29) {
            ASSERT_TRUE(std::isnan(k) && std::isnan(v)) << "row " << t << " written";
            continue;
          }
          float wk = s.k[size_t((t - 20) * s.ldk + j * dims.D + d)];
          float wv = s.v[size_t((t - 20) * s.ldk + j * dims.D + d)];
          if (dt == DType::kBF16) {
            wk = core::bf16_to_f32(core::f32_to_bf16(wk));
            wv = core::bf16_to_f32(core::f32_to_bf16(wv));
          }
          ASSERT_EQ(testing::bits_of(k), testing::bits_of(wk)) << j << " " << d << " " << t;
          ASSERT_EQ(testing::bits_of(v), testing::bits_of(wv)) << j << " " << d << " " << t;
        }
      }
    }
    if (dt == DType::kBF16) {
      EXPECT_EQ(kv_at(dims, cache.K.data(), true, 0, 0, 20), 1.0f);
      EXPECT_EQ(kv_at(dims, cache.K.data(), true, 0, 1, 20), 1.015625f);
    }
  }
}

TEST(AttentionDeathTest, HeadWidthMustBeAMultipleOf16) {
  const AttentionDims dims = make_dims(2, 1, 24, 8, DType::kF32);
  std::vector<float> q(48), out(48);
  std::vector<float> K(24 * 8), V(24 * 8);
  EXPECT_DEATH(attention(dims, q.data(), 48, 1, 0, K.data(), V.data(), out.data(), 48, nullptr),
               "multiple of 16");
}

}  // namespace
}  // namespace anchorage::kernels

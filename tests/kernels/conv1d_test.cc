// Tests for the causal depthwise conv1d + SiLU (kernels/conv1d.h): against the reference
// (kernels/ref/conv1d_ref.h) within a stated tolerance, tails exactly; the orientation (§7.5
// impulse); bit-identical in every ISA, for any split of the tokens into calls (the tail
// carried), including splits shorter than the tail, and for any split of the channels over
// threads.
#include "kernels/conv1d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_testing.h"
#include "kernels/activation.h"
#include "kernels/ref/conv1d_ref.h"

namespace anchorage::kernels {
namespace {

using testing::bits_of;
using testing::random_floats;
using testing::same_bits;

struct Problem {
  int64_t T, C, Kc, ldx, ldy;
  std::vector<float> x, w, tail;
  Problem(int64_t t, int64_t c, int64_t kc, uint64_t seed)
      : T(t), C(c), Kc(kc), ldx(c + 5), ldy(c + 2) {
    x = random_floats(T * ldx, seed);
    w = random_floats(Kc * C, seed + 1, 0.5);
    tail = random_floats((Kc - 1) * C, seed + 2);
  }
  std::vector<float> out() const { return std::vector<float>(size_t(T * ldy), -99.0f); }
};

// Per output: Kc fmas from +0 (relative error below Kc·2^-24 of Σ|w·X|, which can exceed the
// sum itself when terms cancel), then silu's 4 ulp. Tolerance: 1e-6·Σ|w·X| + 5e-7·|ref|.
TEST(Conv1d, MatchesReferenceAndTailsExactly) {
  uint64_t seed = 1;
  for (int64_t C : {1, 7, 16, 17, 100, 2048}) {
    for (int64_t Kc : {1, 2, 4, 5}) {
      for (int64_t T : {1, 2, 3, 9}) {
        const Problem p(T, C, Kc, seed++);
        std::vector<float> y = p.out(), want = p.out(), tail = p.tail, tail_ref = p.tail;
        conv1d_silu(p.x.data(), T, C, p.ldx, tail.data(), p.w.data(), Kc, y.data(), p.ldy);
        conv1d_silu_ref(p.x.data(), T, C, p.ldx, tail_ref.data(), p.w.data(), Kc, want.data(),
                        p.ldy);
        EXPECT_TRUE(same_bits(tail, tail_ref)) << "C=" << C << " Kc=" << Kc << " T=" << T;
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t c = 0; c < p.ldy; ++c) {
            const size_t at = size_t(t * p.ldy + c);
            if (c >= C) {
              ASSERT_EQ(y[at], -99.0f) << "padding written";
              continue;
            }
            double mag = 0.0;  // Σ_j |w[j][c] · X[t + j]|
            for (int64_t j = 0; j < Kc; ++j) {
              const int64_t m = t + j;
              const float X =
                  m < Kc - 1 ? p.tail[size_t(m * C + c)] : p.x[size_t((m - (Kc - 1)) * p.ldx + c)];
              mag += std::fabs(double(p.w[size_t(j * C + c)]) * X);
            }
            ASSERT_NEAR(y[at], want[at], 1e-6 * mag + 5e-7 * std::fabs(want[at]))
                << "C=" << C << " Kc=" << Kc << " t=" << t << " c=" << c;
          }
        }
      }
    }
  }
}

// §7.5: an impulse on channel c at t = 0 with a zero tail gives y(d) = silu(w[K-1-d][c]) for
// d < K and silu(0) = 0 after; after the first token the tail is [0, 0, impulse].
TEST(Conv1d, ImpulseShowsOrientation) {
  const int64_t C = 20, Kc = 4, T = 7, c = 13;
  const std::vector<float> w = random_floats(Kc * C, 3);
  std::vector<float> x(size_t(T * C), 0.0f), y(size_t(T * C)), tail(size_t((Kc - 1) * C), 0.0f);
  x[size_t(c)] = 1.0f;
  std::vector<float> tail1 = tail, y1(static_cast<size_t>(C));
  conv1d_silu(x.data(), 1, C, C, tail1.data(), w.data(), Kc, y1.data(), C);
  for (int64_t m = 0; m < Kc - 1; ++m) {
    for (int64_t ch = 0; ch < C; ++ch) {
      const float want = (m == Kc - 2 && ch == c) ? 1.0f : 0.0f;
      ASSERT_EQ(tail1[size_t(m * C + ch)], want) << "tail row " << m << " channel " << ch;
    }
  }
  conv1d_silu(x.data(), T, C, C, tail.data(), w.data(), Kc, y.data(), C);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t ch = 0; ch < C; ++ch) {
      float want = 0.0f;
      if (ch == c && t < Kc) want = silu(w[size_t((Kc - 1 - t) * C + c)]);
      ASSERT_EQ(bits_of(y[size_t(t * C + ch)]), bits_of(want)) << "t=" << t << " ch=" << ch;
    }
  }
}

TEST(Conv1d, EveryIsaGivesTheSameBits) {
  for (int64_t C : {5, 33, 2048}) {
    const Problem p(11, C, 4, 40 + C);
    testing::expect_same_bits_every_isa([&] {
      std::vector<float> y = p.out(), tail = p.tail;
      conv1d_silu(p.x.data(), p.T, C, p.ldx, tail.data(), p.w.data(), p.Kc, y.data(), p.ldy);
      y.insert(y.end(), tail.begin(), tail.end());
      return y;
    });
  }
}

// Runs the T tokens as calls of the given lengths, carrying the tail; returns y then the tail.
std::vector<float> run_split(const Problem& p, const std::vector<int64_t>& lengths) {
  std::vector<float> y = p.out(), tail = p.tail;
  int64_t t0 = 0;
  for (int64_t n : lengths) {
    conv1d_silu(p.x.data() + t0 * p.ldx, n, p.C, p.ldx, tail.data(), p.w.data(), p.Kc,
                y.data() + t0 * p.ldy, p.ldy);
    t0 += n;
  }
  y.insert(y.end(), tail.begin(), tail.end());
  return y;
}

// Split invariance (§7.3 for the conv): [0, a) then [a, T) equals one call, and so do batches of
// 1, 7, 64 and 1,024 tokens, bit for bit; a < K-1 exercises a tail that keeps old entries.
TEST(Conv1d, AnySplitGivesTheSameBits) {
  testing::IsaScope scope;
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    const Problem p(70, 37, 4, 77);
    const std::vector<float> whole = run_split(p, {p.T});
    for (int64_t a : {1, 2, 3, 4, 5, 63, 64, 65}) {
      EXPECT_TRUE(same_bits(run_split(p, {a, p.T - a}), whole)) << "a=" << a;
    }
    std::vector<int64_t> ones(size_t(p.T), 1);
    EXPECT_TRUE(same_bits(run_split(p, ones), whole));
    const Problem big(1030, 37, 4, 78);
    const std::vector<float> big_whole = run_split(big, {big.T});
    for (int64_t batch : {1, 7, 64, 1024}) {
      std::vector<int64_t> lengths;
      for (int64_t t = 0; t < big.T; t += batch) lengths.push_back(std::min(batch, big.T - t));
      EXPECT_TRUE(same_bits(run_split(big, lengths), big_whole)) << "batch " << batch;
    }
  }
}

// The channels split over a pool's threads (1,024 a task; 2,100 channels: two whole ranges and
// a short one, not a multiple of 16) give the bits of one thread, outputs and tail, for a
// decode step and for a chunk longer than the tail, every call carrying the tail.
TEST(Conv1d, ThreadsGiveTheSameBits) {
  testing::IsaScope scope;
  core::ThreadPool pool(2);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    const Problem p(9, 2100, 4, 91);
    std::vector<float> y1 = p.out(), yn = p.out(), tail1 = p.tail, tailn = p.tail;
    for (int64_t t0 : {0, 1, 2}) {  // tokens [0, 1), [1, 2), then [2, 9)
      const int64_t n = t0 < 2 ? 1 : p.T - 2;
      conv1d_silu(p.x.data() + t0 * p.ldx, n, p.C, p.ldx, tail1.data(), p.w.data(), p.Kc,
                  y1.data() + t0 * p.ldy, p.ldy);
      conv1d_silu(p.x.data() + t0 * p.ldx, n, p.C, p.ldx, tailn.data(), p.w.data(), p.Kc,
                  yn.data() + t0 * p.ldy, p.ldy, &pool);
    }
    EXPECT_TRUE(same_bits(yn, y1)) << core::isa_name(isa);
    EXPECT_TRUE(same_bits(tailn, tail1)) << core::isa_name(isa);
    EXPECT_FALSE(same_bits(tailn, p.tail));  // the tail did advance
  }
}

}  // namespace
}  // namespace anchorage::kernels

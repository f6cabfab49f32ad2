// Tests for kernels/argmax.h: in every ISA the answer is the sequential loop's (the first
// maximum; a NaN never wins, a NaN at 0 stays; +0 and -0 tie), over lengths around the vector
// builds' blocks of 64 and 16 and a whole vocabulary, with ties, NaNs, infinities and signed
// zeros placed anywhere.
#include "kernels/argmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "kernel_testing.h"

namespace anchorage::kernels {
namespace {

using testing::IsaScope;
using testing::random_floats;
using testing::runnable_isas;

int64_t argmax_loop(const std::vector<float>& x) {
  int64_t best = 0;
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[size_t(best)]) best = int64_t(i);
  return best;
}

void expect_loop_answer(const std::vector<float>& x, const char* what) {
  IsaScope scope;
  const int64_t want = argmax_loop(x);
  for (core::Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    EXPECT_EQ(argmax(x.data(), int64_t(x.size())), want)
        << what << " n=" << x.size() << " isa=" << core::isa_name(isa);
  }
}

const int64_t kLengths[] = {1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 200, 1000, 151936};

TEST(Argmax, RandomRowsGiveTheLoopsAnswer) {
  uint64_t seed = 1;
  for (int64_t n : kLengths) expect_loop_answer(random_floats(n, seed++), "random");
}

// Few distinct values: the maximum repeats in many lanes and sets; the first must win.
TEST(Argmax, TiesGoToTheFirstMaximum) {
  uint64_t seed = 100;
  for (int64_t n : kLengths) {
    std::vector<float> x = random_floats(n, seed++);
    for (float& v : x) v = std::round(v);  // about five values
    expect_loop_answer(x, "rounded");
    std::vector<float> same(size_t(n), 3.0f);
    expect_loop_answer(same, "all equal");
  }
}

TEST(Argmax, SignedZerosTie) {
  for (int64_t n : kLengths) {
    std::vector<float> x(size_t(n), -1.0f);
    core::Rng rng{uint64_t(n)};
    for (float& v : x)
      if (rng.uniform() < 0.3) v = rng.uniform() < 0.5 ? 0.0f : -0.0f;
    expect_loop_answer(x, "signed zeros");
    std::vector<float> zeros(size_t(n), -0.0f);
    zeros[size_t(n / 2)] = 0.0f;
    expect_loop_answer(zeros, "a +0 among -0");
  }
}

TEST(Argmax, NaNsAndInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  uint64_t seed = 200;
  for (int64_t n : kLengths) {
    core::Rng rng(seed);
    std::vector<float> x = random_floats(n, seed++);
    for (float& v : x) {
      const double u = rng.uniform();
      if (u < 0.1) v = nan;
      if (u > 0.95) v = -inf;
    }
    expect_loop_answer(x, "NaNs and -inf");
    x[size_t(n - 1)] = inf;
    expect_loop_answer(x, "+inf last");
    x[0] = nan;
    expect_loop_answer(x, "NaN first");  // 0, whatever follows
    std::vector<float> all_nan(size_t(n), nan);
    expect_loop_answer(all_nan, "all NaN");
    all_nan[0] = -inf;
    expect_loop_answer(all_nan, "-inf then NaNs");
  }
}

// The maximum in each position of a block of 64, and in the tail past the last whole block.
TEST(Argmax, EveryPositionOfTheBlocksAndTheTail) {
  for (int64_t n : {64, 80, 150}) {
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> x = random_floats(n, uint64_t(at + 1));
      x[size_t(at)] = 100.0f;
      expect_loop_answer(x, "one maximum");
    }
  }
}

}  // namespace
}  // namespace anchorage::kernels

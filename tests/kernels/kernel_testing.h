// Shared pieces of the element-wise kernel tests (norm, activation, exp, rope, conv1d, gdn,
// v16): random inputs from core::Rng, the ISAs this CPU runs, a scope that restores the active
// ISA, bit comparison, and the batch-invariance driver. Header-only; tests run on one thread
// except where a test passes a pool itself.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"

namespace anchorage::kernels::testing {

inline std::vector<float> random_floats(int64_t n, uint64_t seed, double scale = 1.0) {
  core::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& f : v) f = float(rng.normal() * scale);
  return v;
}

inline std::vector<float> uniform_floats(int64_t n, uint64_t seed, double lo, double hi) {
  core::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& f : v) f = float(lo + (hi - lo) * rng.uniform());
  return v;
}

// Restores the active ISA when a test ends, whatever it set.
class IsaScope {
 public:
  IsaScope() : saved_(core::active_isa()) {}
  ~IsaScope() { core::set_active_isa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  core::Isa saved_;
};

// The ISAs this CPU can run, lowest first.
inline std::vector<core::Isa> runnable_isas() {
  std::vector<core::Isa> out;
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2, core::Isa::kAvx512}) {
    if (int(isa) <= int(core::detected_isa())) out.push_back(isa);
  }
  return out;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Runs fn once per runnable ISA (set active) and expects the same bits from each.
inline void expect_same_bits_every_isa(const std::function<std::vector<float>()>& fn) {
  IsaScope scope;
  std::vector<float> first;
  for (core::Isa isa : runnable_isas()) {
    core::set_active_isa(isa);
    std::vector<float> out = fn();
    if (first.empty()) {
      first = std::move(out);
    } else {
      EXPECT_TRUE(same_bits(out, first)) << core::isa_name(isa) << " differs from scalar";
    }
  }
}

// Batch invariance of a row kernel: run(r0, n) computes rows [r0, r0 + n) of an output that
// run(0, rows) computes whole. Each batch size in {1, 7, 64, 1024}, on 1 and 2 threads (the
// batches of one pass handed out by a ThreadPool), must give the same bits as the whole call.
inline void expect_batch_invariant(
    int64_t rows, const std::function<std::vector<float>()>& fresh_output,
    const std::function<void(std::vector<float>&, int64_t, int64_t)>& run) {
  std::vector<float> whole = fresh_output();
  run(whole, 0, rows);
  for (int threads : {1, 2}) {
    core::ThreadPool pool(threads);
    for (int64_t batch : {1, 7, 64, 1024}) {
      std::vector<float> out = fresh_output();
      const int64_t n_batches = (rows + batch - 1) / batch;
      pool.parallel_for(n_batches, [&](int64_t b) {
        const int64_t r0 = b * batch;
        run(out, r0, r0 + batch <= rows ? batch : rows - r0);
      });
      EXPECT_TRUE(same_bits(out, whole)) << "batch " << batch << ", threads " << threads;
    }
  }
}

// max |a - b| / max |b| over the tensor: the norm-wise relative error the spec's §7 tolerances
// mean.
inline double normwise_rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::fmax(num, std::fabs(a[i] - b[i]));
    den = std::fmax(den, std::fabs(b[i]));
  }
  return den == 0.0 ? num : num / den;
}

}  // namespace anchorage::kernels::testing

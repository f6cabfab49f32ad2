// Tests for the Gated DeltaNet kernels (kernels/gdn.h): the gates against the double
// reference; the recurrence against an fp64 implementation of §2.7 (the spec's invariant §7.1,
// rel 1e-5); bit-identical in every ISA and thread count; and split invariance of the whole
// conv → L2 norm → gates → recurrence pipeline (§7.3), bit for bit, for a in
// {1, 2, 3, 4, 5, 63, 64, 65} and for batches of 1, 7, 64 and 1,024 tokens; a decode step's own
// column blocking against one call over all the tokens.
#include "kernels/gdn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_testing.h"
#include "kernels/conv1d.h"
#include "kernels/norm.h"
#include "kernels/ref/gdn_ref.h"

namespace anchorage::kernels {
namespace {

using testing::random_floats;
using testing::same_bits;
using testing::uniform_floats;

// Inputs of the recurrence as the layer makes them: q, k L2-normalised (q scaled by
// 1/sqrt(d_k)), v normal, beta in (0, 1), g = log-decay in [g_lo, 0), a non-zero start state.
struct Recurrence {
  GdnDims dims;
  int64_t T, ldq, ldv, ldo;
  std::vector<float> q, k, v, beta, g, S;

  Recurrence(GdnDims d, int64_t t, uint64_t seed, float g_lo = -2.3f)
      : dims(d), T(t), ldq(d.n_k * d.d_k + 3), ldv(d.n_v * d.d_v + 1), ldo(d.n_v * d.d_v + 2) {
    q = random_floats(T * ldq, seed);
    k = random_floats(T * ldq, seed + 1);
    l2norm_heads(q.data(), T, d.n_k, d.d_k, ldq, 1e-6f, 1.0f / std::sqrt(float(d.d_k)));
    l2norm_heads(k.data(), T, d.n_k, d.d_k, ldq, 1e-6f, 1.0f);
    v = random_floats(T * ldv, seed + 2);
    beta = uniform_floats(T * d.n_v, seed + 3, 0.02, 0.98);
    g = uniform_floats(T * d.n_v, seed + 4, g_lo, -1e-3);
    S = random_floats(d.n_v * d.d_k * d.d_v, seed + 5, 0.3);
  }

  // o then the final S, run with the active ISA.
  std::vector<float> run(core::ThreadPool* pool) const {
    std::vector<float> o(size_t(T * ldo), -5.0f), s = S;
    gdn_recurrence(dims, T, q.data(), ldq, k.data(), ldq, v.data(), ldv, beta.data(), g.data(),
                   s.data(), o.data(), ldo, pool);
    o.insert(o.end(), s.begin(), s.end());
    return o;
  }

  // The same, one call a token (a decode step's T = 1 path).
  std::vector<float> run_token_by_token(core::ThreadPool* pool) const {
    std::vector<float> o(size_t(T * ldo), -5.0f), s = S;
    for (int64_t t = 0; t < T; ++t) {
      gdn_recurrence(dims, 1, q.data() + t * ldq, ldq, k.data() + t * ldq, ldq, v.data() + t * ldv,
                     ldv, beta.data() + t * dims.n_v, g.data() + t * dims.n_v, s.data(),
                     o.data() + t * ldo, ldo, pool);
    }
    o.insert(o.end(), s.begin(), s.end());
    return o;
  }

  // The fp64 reference: o (only the d_v columns of each head) and S, normwise rel error each.
  void expect_near_fp64(const std::vector<float>& got, double tol) const {
    const auto wide = [](const std::vector<float>& f) {
      return std::vector<double>(f.begin(), f.end());
    };
    const std::vector<double> qd = wide(q), kd = wide(k), vd = wide(v), bd = wide(beta),
                              gd = wide(g);
    std::vector<double> s = wide(S), o(size_t(T * ldo), -5.0);
    gdn_recurrence_ref(dims, T, qd.data(), ldq, kd.data(), ldq, vd.data(), ldv, bd.data(),
                       gd.data(), s.data(), o.data(), ldo);
    const std::vector<double> o_got(got.begin(), got.begin() + T * ldo);
    const std::vector<double> s_got(got.begin() + T * ldo, got.end());
    const double eo = testing::normwise_rel_error(o_got, o);
    const double es = testing::normwise_rel_error(s_got, s);
    EXPECT_LE(eo, tol) << "outputs, d_k=" << dims.d_k << " d_v=" << dims.d_v;
    EXPECT_LE(es, tol) << "state, d_k=" << dims.d_k << " d_v=" << dims.d_v;
    std::printf("gdn vs fp64 (n_v=%lld d_k=%lld d_v=%lld T=%lld): o %.2e, S %.2e\n",
                (long long)dims.n_v, (long long)dims.d_k, (long long)dims.d_v, (long long)T, eo,
                es);
  }
};

// §7.1: random d_k = d_v = 128 heads, T = 300, fp32 vs fp64 within rel 1e-5 (normwise: max
// abs error over max abs value, for the outputs and the final state). Two decay regimes.
TEST(Gdn, RecurrenceMatchesFp64) {
  for (float g_lo : {-2.3f, -0.01f}) {
    const Recurrence r({.n_k = 1, .n_v = 2, .d_k = 128, .d_v = 128}, 300, 1, g_lo);
    r.expect_near_fp64(r.run(nullptr), 1e-5);
  }
}

// Widths off the 16 and 64 column blocks, GVA in both head orders.
TEST(Gdn, OddShapesMatchFp64) {
  uint64_t seed = 10;
  for (int64_t dk : {1, 5, 32}) {
    for (int64_t dv : {1, 17, 64, 80, 130}) {
      for (bool tiled : {false, true}) {
        const Recurrence r({.n_k = 2, .n_v = 4, .d_k = dk, .d_v = dv, .tiled = tiled}, 20, seed++);
        r.expect_near_fp64(r.run(nullptr), 1e-5);
      }
    }
  }
}

// The key head a value head reads follows dims.tiled (§2.6): running grouped inputs with the
// tiled mapping gives different outputs (so OddShapes' match in both orders means something).
TEST(Gdn, HeadMappingMatters) {
  const Recurrence grouped({.n_k = 2, .n_v = 4, .d_k = 16, .d_v = 16, .tiled = false}, 5, 3);
  Recurrence tiled = grouped;
  tiled.dims.tiled = true;
  EXPECT_FALSE(same_bits(grouped.run(nullptr), tiled.run(nullptr)));
}

TEST(Gdn, EveryIsaAndThreadCountGivesTheSameBits) {
  core::ThreadPool one(1), two(2);
  for (int64_t dv : {128, 80, 7}) {
    const Recurrence r({.n_k = 2, .n_v = 4, .d_k = 128, .d_v = dv, .tiled = true}, 9, 50 + dv);
    testing::expect_same_bits_every_isa([&] {
      const std::vector<float> a = r.run(nullptr);
      EXPECT_TRUE(same_bits(r.run(&one), a));
      EXPECT_TRUE(same_bits(r.run(&two), a));
      return a;
    });
  }
}

// A decode step (T = 1) has a column blocking of its own (gdn_impl.h, kGdnDecodeVectors: 128
// columns at once): token by token it gives the bits of one call over all the tokens, in every
// ISA and on 1 and 2 threads, for widths on and off its 128-column blocks.
TEST(Gdn, OneTokenCallsMatchOneCall) {
  core::ThreadPool one(1), two(2);
  for (int64_t dv : {128, 256, 144, 80}) {
    const Recurrence r({.n_k = 2, .n_v = 4, .d_k = 128, .d_v = dv, .tiled = true}, 6, 70 + dv);
    testing::expect_same_bits_every_isa([&] {
      const std::vector<float> whole = r.run(&one);
      EXPECT_TRUE(same_bits(r.run_token_by_token(&one), whole)) << "d_v " << dv;
      EXPECT_TRUE(same_bits(r.run_token_by_token(&two), whole)) << "d_v " << dv;
      return whole;
    });
  }
}

// sigmoid: 4 ulp (exp_test.cc). g = A·softplus(a + dt): the fp32 sum a + dt moves softplus by
// at most |a + dt|·2^-24 (softplus' <= 1), softplus itself is within 4 ulp, one more product.
TEST(Gdn, GatesMatchReference) {
  const int64_t T = 50, n_v = 9, ld = 11;
  const std::vector<float> b = random_floats(T * ld, 1, 4.0), a = random_floats(T * ld, 2, 8.0);
  const std::vector<float> A = uniform_floats(n_v, 3, -0.34, -0.004);
  std::vector<float> dt = uniform_floats(n_v, 4, -5.7, 19.3);
  dt[0] = 25.0f;  // above the softplus threshold for most tokens
  std::vector<float> beta(size_t(T * n_v)), g(size_t(T * n_v));
  std::vector<double> beta_ref(beta.size()), g_ref(g.size());
  gdn_gates(b.data(), ld, a.data(), ld, T, n_v, A.data(), dt.data(), beta.data(), g.data());
  gdn_gates_ref(b.data(), ld, a.data(), ld, T, n_v, A.data(), dt.data(), beta_ref.data(),
                g_ref.data());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < n_v; ++h) {
      const size_t i = size_t(t * n_v + h);
      EXPECT_NEAR(beta[i], beta_ref[i], 4.8e-7 * beta_ref[i]);
      const double sum = std::fabs(double(a[size_t(t * ld + h)]) + dt[size_t(h)]);
      EXPECT_NEAR(g[i], g_ref[i],
                  6e-7 * std::fabs(g_ref[i]) + std::fabs(A[size_t(h)]) * sum * 6e-8);
      EXPECT_LE(g[i], 0.0f);
    }
  }
}

// A miniature GDN layer without the projections (§2.3-§2.7): qkv → conv1d_silu → L2 norms →
// gates → recurrence, the conv tail and S carried between calls.
struct Pipeline {
  GdnDims dims{.n_k = 2, .n_v = 4, .d_k = 32, .d_v = 32, .tiled = false};
  int64_t T, Kc = 4, key_dim, conv_dim, ld_ba;
  std::vector<float> qkv, ba, conv_w, A, dt;

  Pipeline(int64_t t, uint64_t seed) : T(t) {
    key_dim = dims.n_k * dims.d_k;
    conv_dim = 2 * key_dim + dims.n_v * dims.d_v;
    ld_ba = 2 * dims.n_v;
    qkv = random_floats(T * conv_dim, seed);
    ba = random_floats(T * ld_ba, seed + 1, 2.0);
    conv_w = random_floats(Kc * conv_dim, seed + 2, 0.5);
    A = uniform_floats(dims.n_v, seed + 3, -0.34, -0.004);
    dt = uniform_floats(dims.n_v, seed + 4, -5.7, 5.0);
  }

  // Runs the tokens in calls of the given lengths; returns o, then S, then the conv tail.
  std::vector<float> run(const std::vector<int64_t>& lengths, core::ThreadPool* pool) const {
    const int64_t ldo = dims.n_v * dims.d_v;
    std::vector<float> o(size_t(T * ldo)), S(size_t(dims.n_v * dims.d_k * dims.d_v), 0.0f),
        tail(size_t((Kc - 1) * conv_dim), 0.0f);
    int64_t t0 = 0;
    for (int64_t n : lengths) {
      std::vector<float> y(size_t(n * conv_dim)), beta(size_t(n * dims.n_v)), g(beta.size());
      conv1d_silu(qkv.data() + t0 * conv_dim, n, conv_dim, conv_dim, tail.data(), conv_w.data(), Kc,
                  y.data(), conv_dim);
      l2norm_heads(y.data(), n, dims.n_k, dims.d_k, conv_dim, 1e-6f,
                   1.0f / std::sqrt(float(dims.d_k)));
      l2norm_heads(y.data() + key_dim, n, dims.n_k, dims.d_k, conv_dim, 1e-6f, 1.0f);
      gdn_gates(ba.data() + t0 * ld_ba, ld_ba, ba.data() + t0 * ld_ba + dims.n_v, ld_ba, n,
                dims.n_v, A.data(), dt.data(), beta.data(), g.data());
      gdn_recurrence(dims, n, y.data(), conv_dim, y.data() + key_dim, conv_dim,
                     y.data() + 2 * key_dim, conv_dim, beta.data(), g.data(), S.data(),
                     o.data() + t0 * ldo, ldo, pool);
      t0 += n;
    }
    o.insert(o.end(), S.begin(), S.end());
    o.insert(o.end(), tail.begin(), tail.end());
    return o;
  }
};

TEST(Gdn, LayerSplitInvariance) {
  testing::IsaScope scope;
  core::ThreadPool two(2);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    const Pipeline p(70, 5);
    const std::vector<float> whole = p.run({p.T}, nullptr);
    for (int64_t a : {1, 2, 3, 4, 5, 63, 64, 65}) {
      EXPECT_TRUE(same_bits(p.run({a, p.T - a}, &two), whole)) << "a=" << a;
    }
  }
}

TEST(Gdn, LayerBatchAndThreadInvariance) {
  testing::IsaScope scope;
  core::ThreadPool one(1), two(2);
  for (core::Isa isa : testing::runnable_isas()) {
    core::set_active_isa(isa);
    const Pipeline p(1030, 6);
    const std::vector<float> whole = p.run({p.T}, &one);
    for (core::ThreadPool* pool : {&one, &two}) {
      for (int64_t batch : {1, 7, 64, 1024}) {
        std::vector<int64_t> lengths;
        for (int64_t t = 0; t < p.T; t += batch) lengths.push_back(std::min(batch, p.T - t));
        EXPECT_TRUE(same_bits(p.run(lengths, pool), whole))
            << core::isa_name(isa) << " batch " << batch << " threads " << pool->n_threads();
      }
    }
  }
}

}  // namespace
}  // namespace anchorage::kernels

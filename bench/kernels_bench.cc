// The element-wise kernels (norms, activations, RoPE, conv1d, GDN gates and recurrence) and the
// integer-dot GEMM's activation quantizer (one row of 1,024 and 3,584 inputs), at the
// `small` model's shapes (H 512; GDN n_k 4, n_v 8, d_k = d_v = 128, conv_dim 2048, K 4; attention
// 4 query / 2 KV heads of 128, R 32; FFN 1536), for T = 1 (decode) and T = 1024 (a prefill
// chunk), in every ISA this CPU runs. Prints Google Benchmark's output; JSON with
// --benchmark_format=json. items_per_second counts f32 elements produced (GDN: state elements
// updated, n_v·d_k·d_v a token; argmax: logits read; the activation quantizer: inputs).
// BM_parallel_for_calls times the thread pool's hand-off.
//
//   build-kern/bench/kernels_bench --benchmark_format=json --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/activation.h"
#include "kernels/argmax.h"
#include "kernels/conv1d.h"
#include "kernels/gdn.h"
#include "kernels/norm.h"
#include "kernels/quant_dot.h"
#include "kernels/rope.h"

namespace anchorage::kernels {
namespace {

constexpr int64_t kH = 512, kFfn = 1536, kNk = 4, kNv = 8, kDk = 128, kDv = 128, kKc = 4;
constexpr int64_t kKeyDim = kNk * kDk, kConvDim = 2 * kKeyDim + kNv * kDv;
constexpr int64_t kNq = 4, kNkv = 2, kD = 128, kR = 32;

std::vector<float> random_floats(int64_t n, uint64_t seed, double scale = 1.0) {
  core::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& f : v) f = float(rng.normal() * scale);
  return v;
}

// Sets the ISA of the benchmark's second argument for its lifetime; skips it if not runnable.
class IsaArg {
 public:
  explicit IsaArg(benchmark::State& state) : saved_(core::active_isa()) {
    const auto isa = core::Isa(state.range(1));
    ok_ = int(isa) <= int(core::detected_isa());
    if (!ok_) {
      state.SkipWithError("ISA not supported by this CPU");
      return;
    }
    core::set_active_isa(isa);
    state.SetLabel(std::string(core::isa_name(isa)));
  }
  ~IsaArg() { core::set_active_isa(saved_); }
  bool ok() const { return ok_; }

 private:
  core::Isa saved_;
  bool ok_ = false;
};

void set_items(benchmark::State& state, int64_t per_iteration) {
  state.SetItemsProcessed(int64_t(state.iterations()) * per_iteration);
}

void BM_rmsnorm(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  const std::vector<float> x = random_floats(T * kH, 1), w = random_floats(kH, 2);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    rmsnorm(x.data(), T, kH, kH, w.data(), 1e-6f, y.data(), kH);
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, T * kH);
}

// The attention's q norm: T·n_q rows of D, read with stride 2D (q/gate interleave).
void BM_rmsnorm_qheads(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  const std::vector<float> x = random_floats(T * kNq * 2 * kD, 1), w = random_floats(kD, 2);
  std::vector<float> y(size_t(T * kNq * kD));
  for (auto _ : state) {
    rmsnorm(x.data(), T * kNq, kD, 2 * kD, w.data(), 1e-6f, y.data(), kD);
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, T * kNq * kD);
}

// q and k of a GDN layer (§2.4), in place in the conv output.
void BM_l2norm_qk(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  std::vector<float> y = random_floats(T * kConvDim, 1);
  for (auto _ : state) {
    l2norm_heads(y.data(), T, kNk, kDk, kConvDim, 1e-6f, 1.0f / std::sqrt(float(kDk)));
    l2norm_heads(y.data() + kKeyDim, T, kNk, kDk, kConvDim, 1e-6f, 1.0f);
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, T * 2 * kKeyDim);
}

void BM_gated_rmsnorm(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0), n = kNv * kDv;
  const std::vector<float> o = random_floats(T * n, 1), z = random_floats(T * n, 2),
                           w = random_floats(kDv, 3);
  std::vector<float> y(o.size());
  for (auto _ : state) {
    gated_rmsnorm(o.data(), n, z.data(), n, T, kNv, kDv, w.data(), 1e-6f, y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, T * n);
}

void BM_swiglu(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t n = state.range(0) * kFfn;
  const std::vector<float> g = random_floats(n, 1, 3.0), u = random_floats(n, 2);
  std::vector<float> y(g.size());
  for (auto _ : state) {
    swiglu(g.data(), u.data(), n, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, n);
}

// The integer-dot GEMM's activation quantizer (kernels/quant_dot.h) on one row of K inputs: at
// M = 1 the calling thread runs it alone before a quantized GEMM's blocks go to the pool.
// range(2): 0 the 32-input blocks of Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; 1 the 256-input
// ones of the K-quants and IQ4_XS. items_per_second counts inputs.
void BM_quantize_act(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t K = state.range(0);
  const core::DType t = state.range(2) ? core::DType::kQ4_K : core::DType::kQ8_0;
  const std::vector<float> x = random_floats(K, 7);
  std::vector<uint8_t> row(size_t(act_format(t, K).row_bytes));
  for (auto _ : state) {
    quantize_act_row(t, x.data(), K, row.data());
    benchmark::DoNotOptimize(row.data());
  }
  set_items(state, K);
}

// The attention output gate: T·n_q rows of D, gate interleaved with stride 2D.
void BM_mul_sigmoid(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t rows = state.range(0) * kNq;
  std::vector<float> x = random_floats(rows * kD, 1);
  // Gates in [20, 80): sigmoid rounds to 1, so x (updated in place every iteration) does not
  // decay into subnormals; the kernel is branch-free, so its work does not depend on values.
  std::vector<float> g = random_floats(rows * 2 * kD, 2);
  for (float& f : g) f = 50.0f + 30.0f * std::tanh(f);
  for (auto _ : state) {
    mul_sigmoid(x.data(), kD, g.data() + kD, 2 * kD, rows, kD);
    benchmark::DoNotOptimize(x.data());
  }
  set_items(state, rows * kD);
}

void BM_add(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t n = state.range(0) * kH;
  std::vector<float> h = random_floats(n, 1);
  const std::vector<float> r = random_floats(n, 2, 1e-6);
  for (auto _ : state) {
    add(h.data(), r.data(), n, h.data());
    benchmark::DoNotOptimize(h.data());
  }
  set_items(state, n);
}

// The greedy sampler's argmax over one row of logits (the vocabulary, 151,936). First
// argument unused (1): the ISA is the second, as isa_args gives it.
void BM_argmax(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  constexpr int64_t kVocab = 151936;
  const std::vector<float> logits = random_floats(kVocab, 5);
  for (auto _ : state) benchmark::DoNotOptimize(argmax(logits.data(), kVocab));
  set_items(state, kVocab);
}

// The loop argmax replaced (engine/sampler.cc before kKernelVersion 42), for comparison.
void BM_argmax_plain_loop(benchmark::State& state) {
  constexpr int64_t kVocab = 151936;
  const std::vector<float> logits = random_floats(kVocab, 5);
  for (auto _ : state) {
    const float* x = logits.data();
    benchmark::DoNotOptimize(x);
    int64_t best = 0;
    for (int64_t i = 1; i < kVocab; ++i)
      if (x[i] > x[best]) best = i;
    benchmark::DoNotOptimize(best);
  }
  set_items(state, kVocab);
}

// q (n_q heads) and k (n_kv heads) of an attention layer at positions 1000...
void BM_rope(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  std::vector<float> q = random_floats(T * kNq * kD, 1), k = random_floats(T * kNkv * kD, 2);
  for (auto _ : state) {
    rope_neox(q.data(), T, kNq * kD, kNq, kD, kR, 1000, 1e7f);
    rope_neox(k.data(), T, kNkv * kD, kNkv, kD, kR, 1000, 1e7f);
    benchmark::DoNotOptimize(q.data());
  }
  set_items(state, T * (kNq + kNkv) * kR);
}

void BM_conv1d_silu(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  const std::vector<float> x = random_floats(T * kConvDim, 1), w = random_floats(kKc * kConvDim, 2);
  std::vector<float> tail = random_floats((kKc - 1) * kConvDim, 3), y(x.size());
  for (auto _ : state) {
    conv1d_silu(x.data(), T, kConvDim, kConvDim, tail.data(), w.data(), kKc, y.data(), kConvDim);
    benchmark::DoNotOptimize(y.data());
  }
  set_items(state, T * kConvDim);
}

void BM_gdn_gates(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  const std::vector<float> b = random_floats(T * kNv, 1), a = random_floats(T * kNv, 2, 3.0),
                           A = random_floats(kNv, 3, 0.1), dt = random_floats(kNv, 4, 3.0);
  std::vector<float> beta(b.size()), g(b.size());
  for (auto _ : state) {
    gdn_gates(b.data(), kNv, a.data(), kNv, T, kNv, A.data(), dt.data(), beta.data(), g.data());
    benchmark::DoNotOptimize(g.data());
  }
  set_items(state, T * kNv * 2);
}

// Third argument: threads in the pool (1 = the calling thread only).
void BM_gdn_recurrence(benchmark::State& state) {
  IsaArg isa(state);
  if (!isa.ok()) return;
  const int64_t T = state.range(0);
  core::ThreadPool pool(int(state.range(2)));
  const GdnDims dims{.n_k = kNk, .n_v = kNv, .d_k = kDk, .d_v = kDv, .tiled = true};
  std::vector<float> q = random_floats(T * kKeyDim, 1), k = random_floats(T * kKeyDim, 2);
  l2norm_heads(q.data(), T, kNk, kDk, kKeyDim, 1e-6f, 1.0f / std::sqrt(float(kDk)));
  l2norm_heads(k.data(), T, kNk, kDk, kKeyDim, 1e-6f, 1.0f);
  const std::vector<float> v = random_floats(T * kNv * kDv, 3);
  std::vector<float> beta(size_t(T * kNv), 0.5f), g(size_t(T * kNv), -0.05f);
  std::vector<float> S(size_t(kNv * kDk * kDv), 0.0f), o(size_t(T * kNv * kDv));
  for (auto _ : state) {
    gdn_recurrence(dims, T, q.data(), kKeyDim, k.data(), kKeyDim, v.data(), kNv * kDv, beta.data(),
                   g.data(), S.data(), o.data(), kNv * kDv, &pool);
    benchmark::DoNotOptimize(o.data());
  }
  set_items(state, T * kNv * kDk * kDv);
}

// The pool's own cost: parallel_for calls of 8 tasks of ~0.5 us each (a decode step of `small`
// makes ~60 calls, each a few to a few hundred us). Arguments: threads in the pool, and a gap of
// that many us of the caller's own (busy) work before each call: 0 = back to back, 30 = longer
// than the workers spin, so they sleep. us_per_call against 1 thread's gives what a call's
// hand-off costs.
void BM_parallel_for_calls(benchmark::State& state) {
  core::ThreadPool pool(int(state.range(0)));
  const auto gap = std::chrono::microseconds(state.range(1));
  std::vector<float> x = random_floats(8 * 512, 4);
  float out[8] = {};
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < gap) {
    }
    pool.parallel_for(8, [&](int64_t t) {
      float acc = 0.0f;
      for (int64_t i = 0; i < 512; ++i) acc = acc * 0.5f + x[size_t(t * 512 + i)];
      out[t] = acc;
    });
    benchmark::DoNotOptimize(out);
  }
  state.counters["us_per_call"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void isa_args(benchmark::internal::Benchmark* b) {
  for (int64_t T : {1, 1024}) {
    for (int isa = 0; isa <= int(core::detected_isa()); ++isa) b->Args({T, isa});
  }
}

void gdn_args(benchmark::internal::Benchmark* b) {
  for (int64_t T : {1, 1024}) {
    for (int isa = 0; isa <= int(core::detected_isa()); ++isa) {
      for (int64_t threads : {1, 2}) b->Args({T, isa, threads});
    }
  }
}

BENCHMARK(BM_parallel_for_calls)->ArgsProduct({{1, 2}, {0, 30}})->UseRealTime();
BENCHMARK(BM_rmsnorm)->Apply(isa_args);
BENCHMARK(BM_rmsnorm_qheads)->Apply(isa_args);
BENCHMARK(BM_l2norm_qk)->Apply(isa_args);
BENCHMARK(BM_gated_rmsnorm)->Apply(isa_args);
BENCHMARK(BM_swiglu)->Apply(isa_args);
BENCHMARK(BM_mul_sigmoid)->Apply(isa_args);
BENCHMARK(BM_quantize_act)->Apply([](benchmark::internal::Benchmark* b) {
  for (int64_t K : {1024, 3584}) {
    for (int isa = 0; isa <= int(core::detected_isa()); ++isa) {
      for (int64_t k_quant : {0, 1}) b->Args({K, isa, k_quant});
    }
  }
});
BENCHMARK(BM_add)->Apply(isa_args);
BENCHMARK(BM_argmax_plain_loop);
BENCHMARK(BM_argmax)->Apply([](benchmark::internal::Benchmark* b) {
  for (int isa = 0; isa <= int(core::detected_isa()); ++isa) b->Args({1, isa});
});
BENCHMARK(BM_rope)->Apply(isa_args);
BENCHMARK(BM_conv1d_silu)->Apply(isa_args);
BENCHMARK(BM_gdn_gates)->Apply(isa_args);
BENCHMARK(BM_gdn_recurrence)->Apply(gdn_args)->UseRealTime();

}  // namespace
}  // namespace anchorage::kernels

BENCHMARK_MAIN();

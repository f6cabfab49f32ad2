// GEMM benchmark: the machine's ceilings and the GEMM measured in one run, so the GEMM figures
// come as fractions of what this machine can do (docs/kernels.md):
//   machine/fma_peak/threads:T   register-only AVX-512 FMA loop (12 chains): the FLOP/s ceiling
//   machine/copy_bw/threads:T    memcpy of 256 MiB (GB/s of bytes copied; read+write = 2x)
//   machine/read_bw/threads:T    AVX-512 stream read of 256 MiB: the ceiling for decode (M=1)
//   gemm/<dtype>/M../K../N../threads:T   gflops and frac_peak (mean and best call); at M = 1
//                                also weight_gbps and frac_read_bw / frac_copy_bw
//   machine/hand_off                  a round trip between two threads through one atomic each
//                                     (the floor of any hand-off) and an empty 2-task
//                                     parallel_for: us_round_trip, us_parallel_for
//   cold/<dtype>/K../N../threads:T    decode GEMMs (M = 1) over distinct copies of one weight,
//                                     back to back (~220 MB), so every call reads its weights
//                                     from memory as a decode step's layers do: weight_gbps(_best)
//                                     and frac_plain_read_best against a plain read of the same
//                                     copies between the rounds; the call's size is the variable
//   layers/<dtype>/0.8b_gdn/threads:T the 0.8B shape's Gated DeltaNet layer's four GEMM calls
//                                     (the input group, out, the FFN group, down) over 24
//                                     distinct copies, back to back: the layers' stream
// The shapes are the `small` preset's linear layers and its LM head (cold/ and layers/: the
// published 0.8B shape's). Needs AVX-512 (the machine figures are AVX-512 loops); elsewhere it
// says so and runs nothing.
// Usage: gemm_bench --benchmark_format=json [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/dtype.h"
#include "core/huge_page_arena.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/packed_weight.h"
#include "kernels/quant_dot.h"

namespace anchorage {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sum of the lanes (plain stores: GCC 12's _mm512_reduce_add_ps warns about an uninitialized
// temporary in its own header).
__attribute__((target("avx512f"))) float lane_sum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  float s = 0;
  for (float f : t) s += f;
  return s;
}

// 12 independent chains: more than FMA latency (4) x FMA pipes (2), so the loop runs at the
// FMA issue rate. Returns a value derived from every chain so nothing is optimized away.
__attribute__((target("avx512f,fma"))) float fma_loop(int64_t iters) {
  __m512 a[12];
  for (int j = 0; j < 12; ++j) a[j] = _mm512_set1_ps(1.0f + 0.001f * float(j));
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) a[j] = _mm512_fmadd_ps(a[j], m, c);
  }
  __m512 s = a[0];
  for (int j = 1; j < 12; ++j) s = _mm512_add_ps(s, a[j]);
  return lane_sum(s);
}

__attribute__((target("avx512f"))) float read_stream(const float* p, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < n; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i));
    s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
  }
  return lane_sum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

volatile float g_sink;

// The machine runs other jobs too, so every figure is kept two ways: the mean over the
// benchmark's iterations (what a caller sees now) and the best single trial (what the code
// does when it has the cores to itself; ratios of best to best are stable run to run).
struct Trials {
  double sum_s = 0, best_s = 1e300, cpu_sum_s = 0;
  int64_t n = 0;
  void add(double s) {
    sum_s += s;
    best_s = s < best_s ? s : best_s;
    ++n;
  }
  double mean_s() const { return sum_s / double(n); }
};

// CPU seconds of all our threads: unlike the wall clock it stops while another job has the
// core (it still sees the caches that job evicted).
double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Wall seconds of f(); its CPU seconds go to *cpu_sum_s when given.
template <typename F>
double time_s(F&& f, double* cpu_sum_s = nullptr) {
  const double c0 = process_cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const double wall = seconds_since(t0);
  if (cpu_sum_s) *cpu_sum_s += process_cpu_s() - c0;
  return wall;
}

constexpr int64_t kFmaIters = 1'000'000;              // ~2 ms a thread
constexpr int64_t kStreamBytes = int64_t(256) << 20;  // far past any cache

double fma_gflop(int threads, int64_t iters = kFmaIters) {
  return double(threads) * double(iters) * 12 * 16 * 2 / 1e9;
}
double run_fma(core::ThreadPool& pool, int64_t iters = kFmaIters, double* cpu_sum_s = nullptr) {
  const int t = pool.n_threads();
  return time_s([&] { pool.parallel_for(t, [&](int64_t) { g_sink = fma_loop(iters); }); },
                cpu_sum_s);
}

struct StreamBuffers {
  core::AlignedBuffer src{size_t(kStreamBytes)}, dst{size_t(kStreamBytes)};
  StreamBuffers() {
    std::memset(src.data(), 1, src.size());  // touch every page before timing
    std::memset(dst.data(), 2, dst.size());
  }
};

StreamBuffers& stream_buffers() {
  static StreamBuffers b;
  return b;
}

double run_copy(core::ThreadPool& pool) {
  StreamBuffers& b = stream_buffers();
  const int t = pool.n_threads();
  const int64_t part = kStreamBytes / t;
  return time_s([&] {
    pool.parallel_for(t, [&](int64_t i) {
      std::memcpy(b.dst.as<uint8_t>() + i * part, b.src.as<uint8_t>() + i * part, size_t(part));
    });
  });
}

double run_read(core::ThreadPool& pool) {
  StreamBuffers& b = stream_buffers();
  const int t = pool.n_threads();
  const int64_t part = kStreamBytes / 4 / t;
  return time_s([&] {
    pool.parallel_for(t,
                      [&](int64_t i) { g_sink = read_stream(b.src.as<float>() + i * part, part); });
  });
}

// The machine's ceilings per thread count, from the best trial seen in this run (measured on
// first use and improved by the machine/* benchmarks).
struct MachineFigures {
  double fma_gflops = 0, copy_gbps = 0, read_gbps = 0;
};

MachineFigures& machine(int threads) {
  static MachineFigures figs[3];
  MachineFigures& m = figs[threads];
  if (m.fma_gflops == 0) {
    core::ThreadPool pool(threads);
    Trials fma, copy, read;
    for (int i = 0; i < 30; ++i) fma.add(run_fma(pool));
    for (int i = 0; i < 5; ++i) copy.add(run_copy(pool));
    for (int i = 0; i < 5; ++i) read.add(run_read(pool));
    m.fma_gflops = fma_gflop(threads) / fma.best_s;
    m.copy_gbps = double(kStreamBytes) / 1e9 / copy.best_s;
    m.read_gbps = double(kStreamBytes) / 1e9 / read.best_s;
  }
  return m;
}

double max_of(double a, double b) {
  return a > b ? a : b;
}

void bm_fma_peak(benchmark::State& st, int threads) {
  MachineFigures& m = machine(threads);
  core::ThreadPool pool(threads);
  Trials t;
  for (auto _ : st) t.add(run_fma(pool));
  m.fma_gflops = max_of(m.fma_gflops, fma_gflop(threads) / t.best_s);
  st.counters["gflops_mean"] = fma_gflop(threads) / t.mean_s();
  st.counters["gflops"] = m.fma_gflops;
}

void bm_copy(benchmark::State& st, int threads) {
  MachineFigures& m = machine(threads);
  core::ThreadPool pool(threads);
  Trials t;
  for (auto _ : st) t.add(run_copy(pool));
  m.copy_gbps = max_of(m.copy_gbps, double(kStreamBytes) / 1e9 / t.best_s);
  st.counters["copy_gbps_mean"] = double(kStreamBytes) / 1e9 / t.mean_s();
  st.counters["copy_gbps"] = m.copy_gbps;
}

void bm_read(benchmark::State& st, int threads) {
  MachineFigures& m = machine(threads);
  core::ThreadPool pool(threads);
  Trials t;
  for (auto _ : st) t.add(run_read(pool));
  m.read_gbps = max_of(m.read_gbps, double(kStreamBytes) / 1e9 / t.best_s);
  st.counters["read_gbps_mean"] = double(kStreamBytes) / 1e9 / t.mean_s();
  st.counters["read_gbps"] = m.read_gbps;
}

struct GemmCase {
  int64_t M, K, N;
  core::DType dtype;
  int threads;
};

// Counters: gflops / frac_peak from the mean call against the run's FMA peak at the same
// thread count; gflops_best / frac_peak_best from the fastest call against the fastest of the
// equal-work FMA bursts interleaved with the calls (fma_peak_here); frac_peak_cpu the same
// per CPU second of our threads, summed over all calls and bursts (steadiest on a busy host). M = 1
// adds the weight stream: weight_gbps(_best), its fraction of the machine's read and copy
// bandwidth, and of a plain read of the same bytes (frac_plain_read_best: best call over best
// read; frac_plain_read_cpu: bytes per CPU second over all calls and reads).
void bm_gemm(benchmark::State& st, GemmCase c) {
  const MachineFigures& mf = machine(c.threads);
  core::Rng rng(uint64_t(c.K * 7 + c.N));
  std::vector<float> wf(size_t(c.N * c.K));
  for (auto& v : wf) v = float(rng.uniform() - 0.5);
  const kernels::PackedWeight w(wf.data(), c.N, c.K, c.dtype);
  wf = std::vector<float>();
  std::vector<float> x(size_t(c.M * c.K)), y(size_t(c.M * c.N));
  for (auto& v : x) v = float(rng.uniform() - 0.5);
  core::ThreadPool pool(c.threads);
  kernels::gemm(x.data(), c.M, c.K, w, y.data(), c.N, &pool);  // warm-up: pages, caches
  // At M = 1 each call is paired with a plain read of the same weight bytes on the same
  // threads: the bound for exactly this data (DRAM for the head, L3 for a 4 MiB layer),
  // measured at the same moment as the call it is compared with.
  const float* wbytes = static_cast<const float*>(w.panel(0));
  const int64_t part = w.storage_bytes() / 4 / c.threads / 64 * 64;
  // The FMA burst between calls does the call's FLOPs (per thread) in registers, so both see
  // the same odds of losing the core to another job.
  const double gflop = 2.0 * double(c.M) * double(c.N) * double(c.K) / 1e9;
  const int64_t burst_iters = int64_t(gflop * 1e9 / c.threads / (12 * 16 * 2)) + 1;
  Trials t, rd, fma;
  for (auto _ : st) {
    if (c.M == 1) {
      rd.add(time_s(
          [&] {
            pool.parallel_for(c.threads,
                              [&](int64_t i) { g_sink = read_stream(wbytes + i * part, part); });
          },
          &rd.cpu_sum_s));
    } else {
      fma.add(run_fma(pool, burst_iters, &fma.cpu_sum_s));
    }
    t.add(
        time_s([&] { kernels::gemm(x.data(), c.M, c.K, w, y.data(), c.N, &pool); }, &t.cpu_sum_s));
    benchmark::ClobberMemory();
  }
  st.counters["gflops"] = gflop / t.mean_s();
  st.counters["gflops_best"] = gflop / t.best_s;
  st.counters["frac_peak"] = gflop / t.mean_s() / mf.fma_gflops;
  if (c.M > 1) {
    // Against FMA bursts run between the calls: best call over best burst of the same moments.
    const double peak_here = fma_gflop(c.threads, burst_iters) / fma.best_s;
    st.counters["fma_peak_here"] = peak_here;
    st.counters["frac_peak_best"] = gflop / t.best_s / peak_here;
    // Per CPU second, over all calls and bursts: the kernel's efficiency while it runs.
    st.counters["frac_peak_cpu"] =
        (gflop * double(t.n) / t.cpu_sum_s) /
        (fma_gflop(c.threads, burst_iters) * double(fma.n) / fma.cpu_sum_s);
  }
  st.counters["us_per_call"] = t.mean_s() * 1e6;
  st.counters["us_per_call_best"] = t.best_s * 1e6;
  if (c.M == 1) {
    const double gb = double(w.storage_bytes()) / 1e9;
    st.counters["weight_gbps"] = gb / t.mean_s();
    st.counters["weight_gbps_best"] = gb / t.best_s;
    st.counters["frac_read_bw"] = gb / t.mean_s() / mf.read_gbps;
    st.counters["frac_read_bw_best"] = gb / t.best_s / mf.read_gbps;
    st.counters["frac_copy_bw"] = gb / t.mean_s() / mf.copy_gbps;
    st.counters["frac_copy_bw_best"] = gb / t.best_s / mf.copy_gbps;
    const double read_gb = double(part * c.threads) * 4 / 1e9;
    st.counters["plain_read_gbps_best"] = read_gb / rd.best_s;
    st.counters["frac_plain_read_best"] = (gb / t.best_s) / (read_gb / rd.best_s);
    // The same per CPU second over all calls and reads (steadiest on a busy host).
    st.counters["frac_plain_read_cpu"] =
        (gb * double(t.n) / t.cpu_sum_s) / (read_gb * double(rd.n) / rd.cpu_sum_s);
  }
}

// A group of layers that read one input (kernels::gemm_group) against the same layers one
// gemm() call each, the two alternating within every iteration: `small`'s Gated DeltaNet input
// projections (qkv, z, b, a: K 512, N 2,048, 1,024, 8, 8) or its FFN's gate and up (N 1,536
// twice). Counters: us_separate_best, us_group_best and group_over_separate (best over best).
void bm_group(benchmark::State& st, core::DType dt, int64_t M, int threads, bool gdn) {
  const int64_t K = 512;
  const std::vector<int64_t> ns =
      gdn ? std::vector<int64_t>{2048, 1024, 8, 8} : std::vector<int64_t>{1536, 1536};
  core::Rng rng(uint64_t(M * 31 + threads));
  std::vector<kernels::PackedWeight> ws;
  std::vector<std::vector<float>> ys;
  for (int64_t n : ns) {
    std::vector<float> wf(size_t(n * K));
    for (auto& v : wf) v = float(rng.uniform() - 0.5);
    ws.emplace_back(wf.data(), n, K, dt);
    ys.emplace_back(size_t(M * n));
  }
  std::vector<kernels::GemmOutput> outs;
  for (size_t i = 0; i < ws.size(); ++i) outs.push_back({&ws[i], ys[i].data(), ns[i]});
  std::vector<float> x(size_t(M * K));
  for (auto& v : x) v = float(rng.uniform() - 0.5);
  core::ThreadPool pool(threads);
  auto separate = [&] {
    for (size_t i = 0; i < ws.size(); ++i)
      kernels::gemm(x.data(), M, K, ws[i], ys[i].data(), ns[i], &pool);
  };
  auto group = [&] { kernels::gemm_group(x.data(), M, K, outs, &pool); };
  separate();  // warm-up: pages, caches
  group();
  Trials a, b;
  for (auto _ : st) {
    a.add(time_s(separate, &a.cpu_sum_s));
    b.add(time_s(group, &b.cpu_sum_s));
    benchmark::ClobberMemory();
  }
  st.counters["us_separate_best"] = a.best_s * 1e6;
  st.counters["us_group_best"] = b.best_s * 1e6;
  st.counters["group_over_separate"] = b.best_s / a.best_s;
}

// A round trip between two threads, each spinning on its own line for the other's store: what
// one hand-off of a cache line between these cores costs (every parallel_for pays several), and
// an empty parallel_for of 2 tasks on 2 threads.
void bm_hand_off(benchmark::State& st) {
  struct alignas(64) Flag {
    std::atomic<int64_t> v{0};
  };
  Flag ping, pong;
  constexpr int64_t kTrips = 20000;
  std::atomic<bool> stop{false};
  std::thread other([&] {
    for (int64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      while (ping.v.load(std::memory_order_acquire) < i) {
        if (stop.load(std::memory_order_relaxed)) return;
        _mm_pause();
      }
      pong.v.store(i, std::memory_order_release);
    }
  });
  core::ThreadPool pool(2);
  int64_t sent = 0;
  Trials trips, calls;
  for (auto _ : st) {
    trips.add(time_s([&] {
      for (int64_t i = 0; i < kTrips; ++i) {
        ping.v.store(++sent, std::memory_order_release);
        while (pong.v.load(std::memory_order_acquire) < sent) _mm_pause();
      }
    }));
    calls.add(time_s([&] {
      for (int64_t i = 0; i < kTrips; ++i) pool.parallel_for(2, [](int64_t) {});
    }));
  }
  stop.store(true);
  ping.v.store(sent + 1, std::memory_order_release);
  other.join();
  st.counters["us_round_trip"] = trips.best_s * 1e6 / double(kTrips);
  st.counters["us_parallel_for"] = calls.best_s * 1e6 / double(kTrips);
}

// Distinct copies of weights made from one f32 matrix (each copy differs in one element, so no
// two share a panel), in huge-page arenas as a model's loader places them.
std::vector<kernels::PackedWeight> weight_copies(int64_t N, int64_t K, core::DType dt,
                                                 int64_t copies, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> wf(size_t(N * K));
  for (auto& v : wf) v = float(rng.uniform() - 0.5);
  auto arena = std::make_shared<core::HugePageArena>();
  std::vector<kernels::PackedWeight> ws;
  for (int64_t i = 0; i < copies; ++i) {
    wf[size_t(i)] += 0.25f;
    ws.emplace_back(wf.data(), N, K, dt, arena);
  }
  return ws;
}

// A plain read of every copy's panels on the pool's threads (each copy split as bm_gemm splits
// one weight): the bound for the same bytes at the same moment.
double read_copies(core::ThreadPool& pool, const std::vector<const kernels::PackedWeight*>& ws) {
  const int t = pool.n_threads();
  return time_s([&] {
    for (const kernels::PackedWeight* w : ws) {
      const float* bytes = static_cast<const float*>(w->panel(0));
      const int64_t part = w->storage_bytes() / 4 / t / 64 * 64;
      pool.parallel_for(t, [&](int64_t i) { g_sink = read_stream(bytes + i * part, part); });
    }
  });
}

// Each round a plain read of `all` and then run(), which reads the same weights; the counters
// both share. Returns run()'s trials.
template <typename F>
Trials time_against_read(benchmark::State& st, core::ThreadPool& pool,
                         const std::vector<const kernels::PackedWeight*>& all, F&& run) {
  double gb = 0;
  for (const kernels::PackedWeight* w : all) gb += double(w->storage_bytes()) / 1e9;
  Trials t, rd;
  for (auto _ : st) {
    rd.add(read_copies(pool, all));
    t.add(time_s(run));
    benchmark::ClobberMemory();
  }
  st.counters["weight_gbps"] = gb / t.mean_s();
  st.counters["weight_gbps_best"] = gb / t.best_s;
  st.counters["plain_read_gbps_best"] = gb / rd.best_s;
  st.counters["frac_plain_read_best"] = rd.best_s / t.best_s;
  st.counters["mb"] = gb * 1e3;
  return t;
}

void bm_cold(benchmark::State& st, core::DType dt, int64_t K, int64_t N, int threads) {
  const int64_t bytes_one = N * K * core::dtype_row_bytes(dt, 256) / 256;
  const int64_t copies = std::max<int64_t>(2, (int64_t(220) << 20) / bytes_one);
  const std::vector<kernels::PackedWeight> ws = weight_copies(N, K, dt, copies, uint64_t(K + N));
  std::vector<const kernels::PackedWeight*> all;
  for (const auto& w : ws) all.push_back(&w);
  std::vector<float> x(static_cast<size_t>(K)), y(static_cast<size_t>(N));
  core::Rng rng(3);
  for (auto& v : x) v = float(rng.uniform() - 0.5);
  core::ThreadPool pool(threads);
  const Trials t = time_against_read(st, pool, all, [&] {
    for (const auto& w : ws) kernels::gemm(x.data(), 1, K, w, y.data(), N, &pool);
  });
  st.counters["copies"] = double(copies);
  st.counters["mb_per_call"] = st.counters["mb"] / double(copies);
  st.counters["us_per_call_best"] = t.best_s * 1e6 / double(copies);
}

// The 0.8B shape's Gated DeltaNet layer (hidden 1,024, qkv 6,144, z 2,048, beta and alpha 16,
// FFN 3,584) as its forward calls the GEMMs, over 24 distinct copies.
void bm_layers(benchmark::State& st, core::DType dt, int threads) {
  struct Layer {
    int64_t N, K;  // out, in
  };
  const Layer shapes[] = {{6144, 1024}, {2048, 1024}, {16, 1024},   {16, 1024},
                          {1024, 2048}, {3584, 1024}, {3584, 1024}, {1024, 3584}};
  constexpr int kLayers = 24;
  std::vector<std::vector<kernels::PackedWeight>> w;  // [shape][layer]
  std::vector<const kernels::PackedWeight*> all;
  for (size_t i = 0; i < std::size(shapes); ++i)
    w.push_back(weight_copies(shapes[i].N, shapes[i].K, dt, kLayers, 11 + i));
  for (int l = 0; l < kLayers; ++l) {
    for (auto& s : w) all.push_back(&s[size_t(l)]);
  }
  std::vector<float> x(3584), y(6144), y2(2048), yb(16), ya(16), yo(1024), yg(3584), yu(3584);
  core::Rng rng(5);
  for (auto& v : x) v = float(rng.uniform() - 0.5);
  core::ThreadPool pool(threads);
  time_against_read(st, pool, all, [&] {
    for (int l = 0; l < kLayers; ++l) {
      const size_t L = size_t(l);
      const kernels::GemmOutput in[] = {{&w[0][L], y.data(), 6144},
                                        {&w[1][L], y2.data(), 2048},
                                        {&w[2][L], yb.data(), 16},
                                        {&w[3][L], ya.data(), 16}};
      kernels::gemm_group(x.data(), 1, 1024, in, &pool);
      kernels::gemm(x.data(), 1, 2048, w[4][L], yo.data(), 1024, &pool);
      const kernels::GemmOutput ffn[] = {{&w[5][L], yg.data(), 3584}, {&w[6][L], yu.data(), 3584}};
      kernels::gemm_group(x.data(), 1, 1024, ffn, &pool);
      kernels::gemm(x.data(), 1, 3584, w[7][L], yo.data(), 1024, &pool);
    }
  });
}

void register_all() {
  benchmark::RegisterBenchmark("machine/hand_off", bm_hand_off)->Iterations(20)->UseRealTime();
  for (int t : {1, 2}) {
    const std::string suffix = "/threads:" + std::to_string(t);
    benchmark::RegisterBenchmark(("machine/fma_peak" + suffix).c_str(), bm_fma_peak, t)
        ->Iterations(40)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("machine/copy_bw" + suffix).c_str(), bm_copy, t)
        ->Iterations(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("machine/read_bw" + suffix).c_str(), bm_read, t)
        ->Iterations(8)
        ->UseRealTime();
  }
  // The `small` preset's linear layers: [K in, N out].
  struct Shape {
    int64_t K, N;
  };
  const Shape shapes[] = {{512, 2048}, {512, 1536}, {1536, 512}};
  // Every weight storage type (kernels/packed_weight.h); f16 and the quantized types are
  // dequantized into an f32 panel block as the GEMM packs them.
  const core::DType every_type[] = {core::DType::kF32,    core::DType::kBF16,   core::DType::kF16,
                                    core::DType::kQ8_0,   core::DType::kQ4_K,   core::DType::kQ6_K,
                                    core::DType::kQ4_0,   core::DType::kIQ4_NL, core::DType::kQ5_K,
                                    core::DType::kIQ4_XS, core::DType::kQ5_0,   core::DType::kQ4_1,
                                    core::DType::kQ5_1,   core::DType::kQ3_K,   core::DType::kQ2_K};
  for (core::DType dt : every_type) {
    for (int t : {1, 2}) {
      std::vector<GemmCase> cases;
      for (int64_t M : {1, 16, 1024}) {
        for (const Shape& s : shapes) cases.push_back({M, s.K, s.N, dt, t});
      }
      cases.push_back({1, 512, 151936, dt, t});  // the LM head, decode only
      for (const GemmCase& c : cases) {
        const std::string name = "gemm/" + std::string(core::dtype_name(dt)) + "/M" +
                                 std::to_string(c.M) + "/K" + std::to_string(c.K) + "/N" +
                                 std::to_string(c.N) + "/threads:" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), bm_gemm, c)->UseRealTime()->MinTime(0.3);
      }
    }
  }
  // The 0.8B shape's decode calls, cold: [K in, N out] of the in-projection (its largest), z,
  // out, down, and a call as large as a third of the tied head.
  const Shape cold_shapes[] = {
      {1024, 6144}, {1024, 2048}, {2048, 1024}, {3584, 1024}, {1024, 49152}};
  for (core::DType dt : every_type) {
    if (dt == core::DType::kF32) continue;  // 4 bytes a weight: its stream needs no case here
    for (int t : {1, 2}) {
      for (const Shape& s : cold_shapes) {
        const std::string name = "cold/" + std::string(core::dtype_name(dt)) + "/K" +
                                 std::to_string(s.K) + "/N" + std::to_string(s.N) +
                                 "/threads:" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), bm_cold, dt, s.K, s.N, t)
            ->Iterations(12)
            ->UseRealTime();
      }
      const std::string name =
          "layers/" + std::string(core::dtype_name(dt)) + "/0.8b_gdn/threads:" + std::to_string(t);
      benchmark::RegisterBenchmark(name.c_str(), bm_layers, dt, t)->Iterations(12)->UseRealTime();
    }
  }
  for (core::DType dt : {core::DType::kF32, core::DType::kQ8_0, core::DType::kQ4_K}) {
    for (int t : {1, 2}) {
      for (int64_t M : {1, 16, 1024}) {
        for (bool gdn : {true, false}) {
          const std::string name = "group/" + std::string(core::dtype_name(dt)) + "/" +
                                   (gdn ? "gdn_in" : "ffn_in") + "/M" + std::to_string(M) +
                                   "/threads:" + std::to_string(t);
          benchmark::RegisterBenchmark(name.c_str(), bm_group, dt, M, t, gdn)
              ->UseRealTime()
              ->MinTime(0.3);
        }
      }
    }
  }
}

}  // namespace
}  // namespace anchorage

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (anchorage::core::detected_isa() != anchorage::core::Isa::kAvx512) {
    std::fprintf(stderr, "gemm_bench: this CPU has no AVX-512; nothing measured\n");
    return 0;
  }
  benchmark::AddCustomContext(
      "isa", std::string(anchorage::core::isa_name(anchorage::core::active_isa())));
  benchmark::AddCustomContext(
      "quant_dot",
      std::string(anchorage::kernels::quant_dot_name(anchorage::kernels::quant_dot())));
  anchorage::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

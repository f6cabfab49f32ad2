// Attention benchmark on the `small` preset's attention dims (n_q = 4, n_kv = 2, D = 128):
//   attention/<dtype>/ctx:C/T:1024/threads:N   a prefill chunk of 1024 queries ending at C
//                                              (positions C-1024 .. C-1; at C = 1024 the
//                                              causal triangle from 0)
//   attention/<dtype>/ctx:C/T:1/threads:N      one decode step at position C-1
//   attention_0.8b_cold/<dtype>/ctx:C/T:1/threads:1  a decode step at the published 0.8B shape
//                                              (n_q = 8, n_kv = 2, D = 256) with K and V
//                                              evicted before each call (96 MiB read, not
//                                              timed), as a decode step's layer meets them;
//                                              the call stores the step's K/V row first
//   attention_0.8b_warm/<dtype>/ctx:C/T:1/threads:1  the same step with K and V left in the
//                                              caches by the previous call (in L3: 2 MiB of
//                                              bf16 K/V at 1k, 16 MiB at 8k), so the kernel's
//                                              own speed shows: gflops against the core's FMA
//                                              rate (AMD EPYC Zen 5: 2 zmm FMAs a cycle,
//                                              224 GFLOP/s at 3.5 GHz)
// Counters: gflops (4·D FLOPs per query head per key: the q·k and p·V multiply-adds; exp and
// softmax bookkeeping not counted) per wall second and per CPU second of our threads (robust to
// other jobs on a shared machine), us_per_call; decode adds kv_gbps (and _per_cpu), the K and V
// bytes it streams per second.
// Usage: attention_bench --benchmark_format=json [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"

namespace anchorage {
namespace {

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct AttnCase {
  int64_t ctx, T;
  core::DType dtype;
  int threads;
  int64_t n_q = 4, n_kv = 2, D = 128;  // small's dims; the 0.8B shape is 8, 2, 256
  bool cold = false;  // K and V evicted before each call, as between a decode step's layers
};

// Reads a buffer larger than the last-level cache, so the next call finds K and V in DRAM.
void evict_caches() {
  static core::AlignedBuffer junk(size_t(96) << 20);
  static uint64_t sink = 0;
  const uint64_t* p = junk.as<uint64_t>();
  uint64_t acc = 0;
  for (size_t i = 0; i < junk.size() / 8; i += 8) acc += p[i];
  sink += acc;
  benchmark::DoNotOptimize(sink);
}

void bm_attention(benchmark::State& st, AttnCase c) {
  kernels::AttentionDims dims;
  dims.n_q = c.n_q;
  dims.n_kv = c.n_kv;
  dims.D = c.D;
  dims.capacity = c.ctx;
  dims.kv_dtype = c.dtype;
  const int64_t kv_width = dims.n_kv * dims.D, q_width = dims.n_q * dims.D;
  const size_t cache_bytes = size_t(kv_width * c.ctx * core::dtype_size(c.dtype));
  core::AlignedBuffer K(cache_bytes), V(cache_bytes);
  {
    // Fill the cache a slice at a time (a 32k context would need 64 MiB of f32 rows at once).
    core::Rng rng(uint64_t(c.ctx));
    const int64_t slice = 1024;
    std::vector<float> k(size_t(slice * kv_width)), v(size_t(slice * kv_width));
    for (int64_t p = 0; p < c.ctx; p += slice) {
      for (auto& x : k) x = float(rng.normal());
      for (auto& x : v) x = float(rng.normal());
      const int64_t n = slice < c.ctx - p ? slice : c.ctx - p;
      kernels::kv_store(dims, k.data(), kv_width, v.data(), kv_width, n, p, K.data(), V.data());
    }
  }
  core::Rng rng(7);
  std::vector<float> q(size_t(c.T * q_width)), out(size_t(c.T * q_width));
  for (auto& x : q) x = float(rng.normal());
  const int64_t pos0 = c.ctx - c.T;
  // The step's own K and V rows, which a cold case stores in each call as a decode step does.
  std::vector<float> kv_row(size_t(2 * c.T * kv_width));
  for (auto& x : kv_row) x = float(rng.normal());
  core::ThreadPool pool(c.threads);
  kernels::attention(dims, q.data(), q_width, c.T, pos0, K.data(), V.data(), out.data(), q_width,
                     &pool);  // warm-up
  int64_t iters = 0;
  double wall_sum = 0, cpu_sum = 0;  // the calls alone (a cold case's eviction is not timed)
  for (auto _ : st) {
    if (c.cold) {
      st.PauseTiming();
      evict_caches();
      st.ResumeTiming();
    }
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    // A cold case stores the step's own K/V row first (the rows it writes are the rows it had).
    if (c.cold) {
      kernels::kv_store(dims, kv_row.data(), kv_width, kv_row.data() + kv_width, kv_width, c.T,
                        pos0, K.data(), V.data());
    }
    kernels::attention(dims, q.data(), q_width, c.T, pos0, K.data(), V.data(), out.data(), q_width,
                       &pool);
    benchmark::ClobberMemory();
    wall_sum += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_sum += process_cpu_seconds() - c0;
    ++iters;
  }
  const double wall = wall_sum / double(iters), cpu = cpu_sum / double(iters);
  double keys = 0;  // Σ over rows of (pos + 1)
  for (int64_t t = 0; t < c.T; ++t) keys += double(pos0 + t + 1);
  const double gflop = 4.0 * double(dims.D) * double(dims.n_q) * keys / 1e9;
  st.counters["gflops"] = gflop / wall;
  st.counters["gflops_per_cpu"] = gflop / cpu;
  st.counters["us_per_call"] = wall * 1e6;
  if (c.T == 1) {
    st.counters["kv_gbps"] = 2.0 * double(cache_bytes) / 1e9 / wall;
    st.counters["kv_gbps_per_cpu"] = 2.0 * double(cache_bytes) / 1e9 / cpu;
  }
}

void register_all() {
  for (core::DType dt : {core::DType::kF32, core::DType::kBF16}) {
    for (int64_t ctx : {1024, 8192, 32768}) {
      for (int64_t T : {1024, 1}) {
        for (int threads : {1, 2}) {
          const std::string name = "attention/" + std::string(core::dtype_name(dt)) +
                                   "/ctx:" + std::to_string(ctx) + "/T:" + std::to_string(T) +
                                   "/threads:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), bm_attention, AttnCase{ctx, T, dt, threads})
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  // Decode at the published 0.8B shape with K and V in DRAM, as a decode step meets them.
  for (core::DType dt : {core::DType::kF32, core::DType::kBF16}) {
    for (int64_t ctx : {1024, 8192, 32768}) {
      for (int threads : {1}) {  // two would time the worker's wake-up after each eviction
        const std::string name = "attention_0.8b_cold/" + std::string(core::dtype_name(dt)) +
                                 "/ctx:" + std::to_string(ctx) +
                                 "/T:1/threads:" + std::to_string(threads);
        AttnCase c{ctx, 1, dt, threads, 8, 2, 256, true};
        benchmark::RegisterBenchmark(name.c_str(), bm_attention, c)
            ->Iterations(ctx > 8192 ? 30 : 100)  // each eviction reads 96 MiB
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (core::DType dt : {core::DType::kF32, core::DType::kBF16}) {
    for (int64_t ctx : {1024, 8192}) {
      const std::string name = "attention_0.8b_warm/" + std::string(core::dtype_name(dt)) +
                               "/ctx:" + std::to_string(ctx) + "/T:1/threads:1";
      benchmark::RegisterBenchmark(name.c_str(), bm_attention,
                                   AttnCase{ctx, 1, dt, 1, 8, 2, 256, false})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace anchorage

int main(int argc, char** argv) {
  anchorage::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

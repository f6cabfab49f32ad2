// sampler_bench: one token drawn by engine::Sampler from a row of `small`'s vocabulary
// (151,936 logits) per iteration, for the sampling settings clients send: greedy; temperature
// alone (the HTTP default of 1, what opencode gets: it sends none); top-p 0.95; top-k 40; min-p
// 0.05; and the three together. Two rows: "peaked" (N(0, 1.5) with 50 tokens 8 to 14 above it,
// a model that knows what comes next) and "flat" (N(0, 3): most of the vocabulary in play).
// BM_token_logprobs: the logprobs a client asks for (server::fill_token_logprobs), per generated
// token, with 0 and 20 alternatives (OpenAI's most), over the same rows.
// Prints Google Benchmark's output; JSON with --benchmark_format=json.
//
//   build/bench/sampler_bench --benchmark_filter=sample
//   build/bench/sampler_bench --benchmark_filter=token_logprobs
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "engine/sampler.h"
#include "server/token_logprobs.h"

namespace anchorage::engine {
namespace {

constexpr int64_t kVocab = 151936;

std::vector<float> logits_row(bool peaked) {
  core::Rng rng(7);
  std::vector<float> x(static_cast<size_t>(kVocab), 0.0f);
  for (float& v : x) v = float(rng.normal() * (peaked ? 1.5 : 3.0));
  if (peaked)
    for (int i = 0; i < 50; ++i) x[size_t((i * 2971) % kVocab)] = 8.0f + 0.12f * float(i);
  return x;
}

// First argument: the settings (below); second: 1 = peaked row, 0 = flat.
void BM_sample(benchmark::State& state) {
  SamplingParams p{.temperature = 0.8, .seed = 1};
  switch (state.range(0)) {
    case 0:
      p.temperature = 0.0;
      state.SetLabel("greedy");
      break;
    case 1:
      state.SetLabel("temperature");
      break;
    case 2:
      p.top_p = 0.95;
      state.SetLabel("top_p 0.95");
      break;
    case 3:
      p.top_k = 40;
      state.SetLabel("top_k 40");
      break;
    case 4:
      p.min_p = 0.05;
      state.SetLabel("min_p 0.05");
      break;
    default:
      p.top_k = 40;
      p.top_p = 0.95;
      p.min_p = 0.05;
      state.SetLabel("top_k 40, top_p 0.95, min_p 0.05");
  }
  const std::vector<float> logits = logits_row(state.range(1) == 1);
  Sampler sampler(p);
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(logits));
  state.counters["us_per_token"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_sample)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1, 0}})->UseRealTime();

// First argument: alternatives asked for (top_logprobs); second: 1 = peaked row, 0 = flat.
void BM_token_logprobs(benchmark::State& state) {
  const std::vector<float> logits = logits_row(state.range(1) == 1);
  server::TokenEvent event;
  event.token = 17;
  for (auto _ : state) {
    server::fill_token_logprobs(logits, int(state.range(0)), &event);
    benchmark::DoNotOptimize(event.logprob);
  }
  state.counters["us_per_token"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_token_logprobs)->ArgsProduct({{0, 20}, {1, 0}})->UseRealTime();

}  // namespace
}  // namespace anchorage::engine

BENCHMARK_MAIN();

// engine_bench: prefill and decode speed of the `small` preset (weights in any storage type:
// f32, bf16, f16, q8_0, q4_k, q6_k; f32 and bf16 by default) at
// several context lengths, the per-op time of one 1,024-token prefill chunk, and the decode
// bound set by memory bandwidth (weight bytes / a copy bandwidth measured in the same run); per
// context also decode_bound_read_all_tok_s, which counts what a step reads besides the weights
// (the K/V rows up to the context, the recurrent state read and written), and
// decode_over_bound_all.
// Prints ONE JSON document on stdout. decode_bound_copy_tok_s = memcpy bandwidth / weight
// bytes (the conservative bound); decode_bound_read_tok_s uses a read-only pass instead. Those
// two (per run) use the bandwidth measured once at the start; each context's own
// decode_bound_read_tok_s, decode_over_bound (weights only) and decode_bound_read_all_tok_s,
// decode_over_bound_all use read_bandwidth_gb_s, measured right before and after that decode
// (read_bandwidth_gb_s_before_after; their mean), which the tables use: on a shared host the
// bandwidth drifts within a run. The read pass loads one word of each 64-byte line in four
// interleaved runs per thread (read_pass); until 2026-12-07 it summed every word, which its own
// adds bound below what the memory delivers on a quiet host. That figure stays beside it:
// read_sum_gb_s, decode_over_sum_bound(_all) per context, decode_bound_read_sum_tok_s per run.
//
// One cold prefill per weight dtype walks up the contexts: at each context C it stops (on a
// chunk line, so the chunking is the cold one), saves the sections, decodes greedily at C,
// writes the sections back and resumes at C (the caches' restore path), then continues.
//
// Memory: rss_after_load_bytes (resident set once the model is built, the f32 init buffers
// freed), peak_rss_bytes (VmHWM over this dtype's run: the peak is reset through
// /proc/self/clear_refs before the model is built, so the start's bandwidth buffers and earlier
// dtypes do not count; the random init's f32 tensors do), both less the ReadMeter's 256 MiB
// buffer, resident through the run; and max_rss_bytes (getrusage ru_maxrss, the process's
// lifetime peak: the start's 1 GiB of bandwidth buffers dominate it).
//
// Flags: --contexts 1024,8192,32768  --weights f32,bf16  --kv-dtype f32  --threads 0 (all)
//        --decode-steps 32  --preset small  --seed 1  --model FILE.gguf  --in-place 0
//        --prefill-repeats 1
//        (N > 1: the prompt of each context prefilled N - 1 more times from an empty engine,
//        prefill_s the median of the N runs, prefill_s_runs all of them)  --capacity 0 (the
//        engine's context capacity, as `anchorage serve --ctx C`, raised to the largest context
//        + the decode steps + 1 when below it; 0, the default, is exactly that). Google Benchmark's
// --benchmark_* flags (scripts/bench.sh) are accepted and ignored. --model measures a qwen35
// GGUF file (any published shape, its tensors' own types, loaded as `anchorage serve` loads
// it, its weights packed before the run) instead of the random preset: --weights, --preset and
// --seed are then ignored and the run's weight_dtype is the file's path. --in-place 1 (with
// --model) loads it as `anchorage serve` does, the linear layers left in the file, but with no
// background packing: the first forward packs what it reads (in the first prefill's time).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.h"
#include "core/aligned_buffer.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "kernels/quant_dot.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/qwen35_gguf_loader.h"
#include "model/op_profile.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace {

using anchorage::bench::parse_i64;

using namespace anchorage;
using nlohmann::json;

struct BenchArgs {
  std::vector<int64_t> contexts = {1024, 8192, 32768};
  std::vector<std::string> weights = {"f32", "bf16"};
  std::string kv = "f32";
  std::string preset = "small";
  int64_t threads = 0;
  int64_t decode_steps = 32;
  int64_t prefill_repeats = 1;
  int64_t capacity = 0;  // the engine's capacity, at least the largest context + steps + 1
  uint64_t seed = 1;
  std::string model;      // a GGUF file instead of the random preset
  bool in_place = false;  // --model's linear layers left in the file until a forward packs them
};

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    size_t c = s.find(',');
    out.push_back(s.substr(0, c));
    if (c == std::string_view::npos) return out;
    s.remove_prefix(c + 1);
  }
}

bool parse_args(int argc, char** argv, BenchArgs* a) {
  for (int i = 1; i < argc; ++i) {
    std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    if (f == "--contexts") {
      a->contexts.clear();
      for (auto s : split(v)) {
        int64_t c = 0;
        if (!parse_i64(s, &c) || c < 1024 || c % 1024 != 0) return false;
        a->contexts.push_back(c);
      }
      std::sort(a->contexts.begin(), a->contexts.end());
    } else if (f == "--weights") {
      a->weights.clear();
      for (auto s : split(v)) a->weights.emplace_back(s);
    } else if (f == "--kv-dtype") {
      a->kv = std::string(v);
    } else if (f == "--preset") {
      a->preset = std::string(v);
    } else if (f == "--threads") {
      if (!parse_i64(v, &a->threads) || a->threads < 0) return false;
    } else if (f == "--decode-steps") {
      if (!parse_i64(v, &a->decode_steps) || a->decode_steps < 1) return false;
    } else if (f == "--prefill-repeats") {
      if (!parse_i64(v, &a->prefill_repeats) || a->prefill_repeats < 1) return false;
    } else if (f == "--capacity") {
      if (!parse_i64(v, &a->capacity) || a->capacity < 0) return false;
    } else if (f == "--model") {
      a->model = std::string(v);
    } else if (f == "--in-place") {
      if (v != "0" && v != "1") return false;
      a->in_place = v == "1";
    } else if (f == "--seed") {
      int64_t s = 0;
      if (!parse_i64(v, &s)) return false;
      a->seed = uint64_t(s);
    } else {
      return false;
    }
  }
  return true;
}

struct Bandwidth {
  double copy_gb_s = 0.0;      // bytes copied per second (each byte counted once)
  double read_gb_s = 0.0;      // bytes read per second: read_pass, the bound
  double read_sum_gb_s = 0.0;  // sum_pass: the bound's figure until 2026-12-07
};

// Runs pass(t) (a sum over thread t's share of bytes) on each of the pool's threads: GB/s.
template <typename Pass>
double timed_pass(core::ThreadPool& pool, size_t bytes, const Pass& pass) {
  std::vector<uint64_t> sums(static_cast<size_t>(pool.n_threads()));
  const int64_t t0 = core::now_ns();
  pool.parallel_for(pool.n_threads(), [&](int64_t t) { sums[size_t(t)] = pass(t); });
  const double gb_s = double(bytes) / double(core::now_ns() - t0);
  volatile uint64_t sink = sums[0];  // keeps the pass
  (void)sink;
  return gb_s;
}

// One pass over `bytes` of src on the pool's threads (each a contiguous slice, walked as
// kStreams interleaved runs), loading one word per 64-byte line: the memory delivers whole
// lines, so this times the lines' delivery and nothing else (GB/s of all the bytes). Summing
// every word (sum_pass) was bound by its own adds on a quiet host: 35-40 GB/s where this pass
// reads 62-79 and the f32 decode's GEMM streams 66-70 (docs/performance.md, "The read bound
// corrected, and every type against it").
double read_pass(core::ThreadPool& pool, const core::AlignedBuffer& src, size_t bytes) {
  constexpr size_t kStreams = 4, kLine = 64 / sizeof(uint64_t);
  const size_t slice = bytes / size_t(pool.n_threads()) / sizeof(uint64_t);  // words
  const size_t run = slice / kStreams / kLine * kLine;
  return timed_pass(pool, bytes, [&](int64_t t) {
    const auto* w = src.as<uint64_t>() + size_t(t) * slice;
    uint64_t acc[kStreams] = {};
    for (size_t i = 0; i < run; i += kLine)
      for (size_t k = 0; k < kStreams; ++k) acc[k] += w[k * run + i];
    uint64_t s = 0;
    for (uint64_t v : acc) s += v;
    return s;
  });
}

// The summing pass the bound was until 2026-12-07 (every word added; kept so that figures can
// be set beside the older tables).
double sum_pass(core::ThreadPool& pool, const core::AlignedBuffer& src, size_t bytes) {
  const size_t slice = bytes / size_t(pool.n_threads()) / sizeof(uint64_t);  // words
  return timed_pass(pool, bytes, [&](int64_t t) {
    const auto* w = src.as<uint64_t>() + size_t(t) * slice;
    uint64_t acc[8] = {};
    for (size_t i = 0; i < slice; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += w[i + size_t(k)];
    uint64_t s = 0;
    for (uint64_t v : acc) s += v;
    return s;
  });
}

// Memory bandwidth over buffers far larger than the caches, on the engine's thread count
// (each thread a contiguous slice), best of 5 each. A decode step reads every weight once,
// so the read figure bounds it; memcpy (which also writes) is the conservative figure.
Bandwidth measure_bandwidth(int n_threads) {
  const size_t bytes = size_t(512) << 20;
  core::AlignedBuffer src(bytes), dst(bytes);
  std::memset(src.data(), 1, bytes);
  core::ThreadPool pool(n_threads);
  const int64_t tasks = n_threads;
  const size_t slice = bytes / size_t(tasks);
  Bandwidth bw;
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t t0 = core::now_ns();
    pool.parallel_for(tasks, [&](int64_t t) {
      std::memcpy(dst.as<uint8_t>() + size_t(t) * slice, src.as<uint8_t>() + size_t(t) * slice,
                  slice);
    });
    bw.copy_gb_s = std::max(bw.copy_gb_s, double(bytes) / double(core::now_ns() - t0));
    bw.read_gb_s = std::max(bw.read_gb_s, read_pass(pool, src, bytes));
    bw.read_sum_gb_s = std::max(bw.read_sum_gb_s, sum_pass(pool, src, bytes));
  }
  return bw;
}

// The read bandwidth next to each decode it bounds: within one run of 15 types the later types'
// shares moved by a quarter with their order (docs/performance.md), so each decode is bounded
// by a read measured right before and after it rather than once at the start. One buffer far
// larger than the caches, kept for the whole run (its bytes are left out of the memory
// figures), read on the engine's thread count, best of three passes (and the summing pass's
// figure beside it).
class ReadMeter {
 public:
  explicit ReadMeter(int n_threads) : src_(kBytes), pool_(n_threads) {
    std::memset(src_.data(), 1, kBytes);
  }
  static constexpr size_t kBytes = size_t(256) << 20;
  double read_gb_s() { return best_of_three(&read_pass); }
  double sum_gb_s() { return best_of_three(&sum_pass); }

 private:
  double best_of_three(double (*pass)(core::ThreadPool&, const core::AlignedBuffer&, size_t)) {
    double best = 0.0;
    for (int rep = 0; rep < 3; ++rep) best = std::max(best, pass(pool_, src_, kBytes));
    return best;
  }

  core::AlignedBuffer src_;
  core::ThreadPool pool_;
};

json profile_json(const model::OpProfile& p) {
  json j = json::object();
  for (size_t k = 0; k < p.ns.size(); ++k)
    j[std::string(model::op_kind_name(model::OpKind(k)))] = double(p.ns[k]) * 1e-6;
  return j;
}

// Decodes `steps` greedy tokens at the engine's length (after one untimed warm-up step) and
// restores the state after.
json decode_at(engine::Engine& e, int64_t steps) {
  std::vector<std::vector<uint8_t>> sections;
  for (size_t i = 0; i < e.layout().sections.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(e.section_data(i));
    sections.emplace_back(p, p + e.layout().sections[i].bytes());
  }
  const int64_t at = e.length();
  const int32_t first = engine::Sampler::argmax(e.logits());
  auto greedy_steps = [&] {
    for (int64_t s = 0; s < steps; ++s) (void)e.decode(engine::Sampler::argmax(e.logits())).is_ok();
  };
  (void)e.decode(first).is_ok();  // warm-up, not timed
  const int64_t t0 = core::now_ns();
  greedy_steps();
  const double secs = double(core::now_ns() - t0) * 1e-9;
  auto restore = [&] {
    e.settle();
    for (size_t i = 0; i < sections.size(); ++i)
      std::memcpy(e.section_data(i), sections[i].data(), sections[i].size());
    (void)e.resume_at(at).is_ok();  // view rows [0, at) were never touched by the decode
  };
  restore();
  // Where a step's time goes: the same steps again from the same state with the per-op timers
  // on (they wait for each op to finish, so these are not the timed run), per token.
  model::OpProfile profile;
  (void)e.decode(first).is_ok();  // resume_at dropped the logits
  e.set_profile(&profile);
  greedy_steps();
  e.set_profile(nullptr);
  restore();
  for (int64_t& ns : profile.ns) ns /= steps;
  const json per_token = profile_json(profile);
  return {{"decode_steps", steps},
          {"decode_s", secs},
          {"decode_tok_s", double(steps) / secs},
          {"decode_ms_per_token", secs * 1e3 / double(steps)},
          {"decode_profile_ms_per_token", per_token}};
}

// Resident set now (/proc/self/statm), and the process's peak (ru_maxrss, KiB on Linux).
int64_t rss_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? int64_t(resident) * int64_t(sysconf(_SC_PAGESIZE)) : -1;
}
// Resets VmHWM (Linux: "5" to /proc/self/clear_refs); false if the kernel refused.
bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}
// VmHWM from /proc/self/status (kB), or -1.
int64_t peak_rss_bytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long v = 0;
    if (std::sscanf(line, "VmHWM: %ld kB", &v) == 1) kb = v;
  }
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}
int64_t max_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return int64_t(ru.ru_maxrss) * 1024;
}

// The random preset in the storage type mo.weight_dtype, or the --model file (its own types).
core::Result<std::unique_ptr<model::Architecture>> load_model(
    const BenchArgs& a, const model::qwen35::Qwen35Config& cfg,
    const model::qwen35::Qwen35Options& mo) {
  if (a.model.empty()) return model::qwen35::make_random_qwen35(cfg, a.seed, mo);
  auto file = model::gguf::GgufFile::open(a.model);
  if (!file.has_value()) return file.error();
  core::ThreadPool pool(core::ThreadPool::hardware_threads());
  model::qwen35::Qwen35Options o = mo;
  o.defer_packing = a.in_place;  // and no background packing: the forward packs them
  auto m = model::gguf::load_qwen35_gguf(*file, o, &pool);
  if (!m.has_value()) return m.error();
  return std::unique_ptr<model::Architecture>(std::move(m.value()));
}

json bench_dtype(const BenchArgs& a, const model::qwen35::Qwen35Config& cfg,
                 const std::string& wname, const Bandwidth& bw, ReadMeter& meter) {
  model::qwen35::Qwen35Options mo;
  if (a.model.empty() && !core::parse_dtype(wname, &mo.weight_dtype))
    return {{"weight_dtype", wname}, {"error", "unknown dtype"}};
  core::parse_dtype(a.kv, &mo.kv_dtype);
  const bool peak_reset = reset_peak_rss();
  int64_t t0 = core::now_ns();
  auto arch = load_model(a, cfg, mo);
  if (!arch.has_value()) return {{"weight_dtype", wname}, {"error", arch.error().to_string()}};
  const double load_s = double(core::now_ns() - t0) * 1e-9;
  const int64_t rss_after_load = rss_bytes();
  const int64_t weight_bytes = (*arch)->weight_bytes();
  const int64_t vocab = (*arch)->vocab_size();
  const int64_t max_ctx = a.contexts.back();
  engine::EngineOptions eo{.capacity = std::max(a.capacity, max_ctx + a.decode_steps + 1),
                           .prefill_chunk = 1024,
                           .anchor_spacing = 1024,
                           .n_threads = int(a.threads)};
  auto eng = engine::Engine::create(std::move(arch.value()), eo);
  if (!eng.has_value()) return {{"weight_dtype", wname}, {"error", eng.error().to_string()}};
  engine::Engine& e = **eng;

  std::vector<int32_t> tokens(static_cast<size_t>(max_ctx));
  core::Rng rng(a.seed + 17);
  for (auto& t : tokens) t = int32_t(rng.next_u64() % uint64_t(vocab));

  json contexts = json::array();
  model::OpProfile chunk_profile;
  double prefill_s = 0.0;
  for (int64_t ctx : a.contexts) {
    const int64_t from = e.length();
    if (from == 0) e.set_profile(&chunk_profile);
    t0 = core::now_ns();
    if (from == 0) {  // the first chunk alone, profiled, then the rest
      (void)e.prefill({tokens.data(), 1024}).is_ok();
      e.set_profile(nullptr);
      if (ctx > 1024) (void)e.prefill({tokens.data() + 1024, size_t(ctx - 1024)}).is_ok();
    } else {
      (void)e.prefill({tokens.data() + from, size_t(ctx - from)}).is_ok();
    }
    prefill_s += double(core::now_ns() - t0) * 1e-9;
    // --prefill-repeats: the whole prompt again from an empty engine, the median of all runs
    // (the walk-up's first run pays for the first touch of buffers; one run on a shared 2-core
    // machine swings by a third). The state at ctx is the same bits either way.
    std::vector<double> runs = {prefill_s};
    for (int64_t rep = 1; rep < a.prefill_repeats; ++rep) {
      e.reset();
      t0 = core::now_ns();
      (void)e.prefill({tokens.data(), size_t(ctx)}).is_ok();
      runs.push_back(double(core::now_ns() - t0) * 1e-9);
    }
    std::vector<double> sorted = runs;
    std::sort(sorted.begin(), sorted.end());
    const double prefill_med = sorted[sorted.size() / 2];
    const double bw_before = meter.read_gb_s(), sum_before = meter.sum_gb_s();
    json c = decode_at(e, a.decode_steps);
    const double bw_after = meter.read_gb_s(), sum_after = meter.sum_gb_s();
    const double near_sum_gb_s = 0.5 * (sum_before + sum_after);
    const double near_gb_s = 0.5 * (bw_before + bw_after);
    c["context"] = ctx;
    c["prefill_s"] = prefill_med;
    c["prefill_s_runs"] = runs;
    c["prefill_tok_s"] = double(ctx) / prefill_med;
    // What a decode step at this context reads besides the weights: the K/V rows of every
    // attention layer up to the context (at the K/V dtype) and the recurrent state, read and
    // written back (the state sections). The bound over all of it is the one a step can reach.
    const double step_bytes = double(weight_bytes) +
                              double(e.cost().bytes_per_token) * double(ctx) +
                              2.0 * double(e.cost().section_bytes);
    // Both bounds from the read bandwidth measured right before and after this decode.
    c["decode_bytes_per_token"] = step_bytes;
    c["read_bandwidth_gb_s"] = near_gb_s;
    c["read_bandwidth_gb_s_before_after"] = {bw_before, bw_after};
    c["decode_bound_read_tok_s"] = near_gb_s * 1e9 / double(weight_bytes);
    c["decode_over_bound"] =
        c["decode_tok_s"].get<double>() * double(weight_bytes) / (near_gb_s * 1e9);
    c["decode_bound_read_all_tok_s"] = near_gb_s * 1e9 / step_bytes;
    c["decode_over_bound_all"] = c["decode_tok_s"].get<double>() * step_bytes / (near_gb_s * 1e9);
    // The same two shares against the summing pass (the tables before 2026-12-07).
    c["read_sum_gb_s"] = near_sum_gb_s;
    c["decode_over_sum_bound"] =
        c["decode_tok_s"].get<double>() * double(weight_bytes) / (near_sum_gb_s * 1e9);
    c["decode_over_sum_bound_all"] =
        c["decode_tok_s"].get<double>() * step_bytes / (near_sum_gb_s * 1e9);
    contexts.push_back(c);
    std::fprintf(stderr, "engine_bench: %s %lld tokens: prefill %.1f tok/s, decode %.1f tok/s\n",
                 wname.c_str(), (long long)ctx, double(ctx) / prefill_med,
                 c["decode_tok_s"].get<double>());
  }
  return {{"weight_dtype", wname},
          {"kv_dtype", a.kv},
          {"capacity", e.capacity()},
          {"weights_in_place", a.in_place && !a.model.empty()},
          {"load_s", load_s},
          {"weight_bytes", weight_bytes},
          {"rss_after_load_bytes", rss_after_load - int64_t(ReadMeter::kBytes)},
          {"peak_rss_bytes", peak_reset ? peak_rss_bytes() - int64_t(ReadMeter::kBytes) : -1},
          {"max_rss_bytes", max_rss_bytes()},
          {"decode_bound_copy_tok_s", bw.copy_gb_s * 1e9 / double(weight_bytes)},
          {"decode_bound_read_tok_s", bw.read_gb_s * 1e9 / double(weight_bytes)},
          {"decode_bound_read_sum_tok_s", bw.read_sum_gb_s * 1e9 / double(weight_bytes)},
          {"state_section_bytes", e.cost().section_bytes},
          {"kv_bytes_per_token", e.cost().bytes_per_token},
          {"contexts", contexts},
          {"prefill_chunk_1024_ms", double(chunk_profile.total_ns()) * 1e-6},
          {"prefill_chunk_1024_profile_ms", profile_json(chunk_profile)}};
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(
        stderr,
        "usage: engine_bench [--contexts 1024,8192,32768] [--weights f32,bf16] "
        "[--kv-dtype f32] [--threads 0] [--decode-steps 32] [--preset small] "
        "[--seed 1] [--model FILE.gguf] [--in-place 0] [--prefill-repeats 1] [--capacity 0]\n"
        "(contexts are multiples of 1024)\n");
    return 2;
  }
  auto cfg = model::qwen35::qwen35_preset(a.model.empty() ? a.preset : "small");
  if (!cfg.has_value()) {
    std::fprintf(stderr, "engine_bench: %s\n", cfg.error().to_string().c_str());
    return 2;
  }
  const int n_threads = a.threads > 0 ? int(a.threads) : core::ThreadPool::hardware_threads();
  const Bandwidth bw = measure_bandwidth(n_threads);
  ReadMeter meter(n_threads);
  json runs = json::array();
  if (a.model.empty()) {
    for (const auto& w : a.weights) runs.push_back(bench_dtype(a, *cfg, w, bw, meter));
  } else {
    runs.push_back(bench_dtype(a, *cfg, a.model, bw, meter));
  }
  json doc = {{"benchmark", "engine"},
              {"preset", a.model.empty() ? a.preset : a.model},
              {"threads", n_threads},
              {"isa", std::string(core::isa_name(core::active_isa()))},
              // Q8_0 / Q4_K / Q6_K arithmetic (ANCHORAGE_QUANT_DOT, kernels/quant_dot.h).
              {"quant_dot", std::string(kernels::quant_dot_name(kernels::quant_dot()))},
              {"prefill_chunk", 1024},
              {"copy_bandwidth_gb_s", bw.copy_gb_s},
              {"read_bandwidth_gb_s", bw.read_gb_s},
              {"runs", runs}};
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

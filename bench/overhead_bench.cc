// overhead_bench: what the server costs around the engine (issue 14 §3; docs/performance.md
// "Overheads around the engine"). Prints ONE JSON document on stdout.
//
// The model is the `small` preset with random weights and the real Qwen3 tokenizer
// (server::load_served_model, as `anchorage serve`); an HttpServer runs in this process on
// 127.0.0.1 and an ephemeral port. Each repeat starts a fresh server per configuration, in
// alternating order (caches, no_cache, then no_cache, caches, ...: the machine is shared, so
// the figures are ratios of neighbours):
//   cold     one chat request of --prompt-tokens tokens of filler the server has never seen,
//            max_tokens 8: caches on (the defaults) against --no-cache. Its usage timings split
//            the time into queue, caches before the prefill, the prefill (and the caches'
//            share of it: the states taken at its lines), from the prefill's end to the first
//            token, decode, and the caches after the generation.
//   resume   (caches only) a conversation of --resume-context tokens, then a follow-up adding
//            about --resume-tokens: its time to first token against the engine's own prefill
//            of the tokens it re-read at the depth it resumed from, plus one state copy at
//            memcpy speed (both measured here on the same engine, between the servers).
// Flags: --preset small  --prompt-tokens 8000  --resume-context 6000  --resume-tokens 200
//        --reps 2  --threads 0 (all)  --seed 1  --capacity 16384
// Google Benchmark's --benchmark_* flags (scripts/bench.sh) are accepted and ignored.

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace {

using namespace anchorage;
using bench::Json;

struct Args {
  std::string preset = "small";
  int64_t prompt_tokens = 8000;
  int64_t resume_context = 6000;
  int64_t resume_tokens = 200;
  int64_t reps = 2;
  int64_t threads = 0;
  int64_t capacity = 16384;
  int64_t seed = 1;
};

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (f.starts_with("--benchmark")) continue;
    if (i + 1 >= argc) return false;
    const std::string_view v = argv[++i];
    if (f == "--preset") {
      a->preset = std::string(v);
      continue;
    }
    int64_t* target = f == "--prompt-tokens"    ? &a->prompt_tokens
                      : f == "--resume-context" ? &a->resume_context
                      : f == "--resume-tokens"  ? &a->resume_tokens
                      : f == "--reps"           ? &a->reps
                      : f == "--threads"        ? &a->threads
                      : f == "--capacity"       ? &a->capacity
                      : f == "--seed"           ? &a->seed
                                                : nullptr;
    if (target == nullptr) return false;
    if (std::from_chars(v.data(), v.data() + v.size(), *target).ec != std::errc()) return false;
  }
  return a->prompt_tokens > 0 && a->resume_context > 0 && a->resume_tokens > 0 && a->reps > 0;
}

// About n tokens of filler (the Qwen3 tokenizer makes ~1.08 tokens of a filler word).
std::string filler_tokens(bench::Filler& f, int64_t n) {
  return f.words(n * 100 / 108);
}

// One greedy chat request; its usage.anchorage timings and the wall time, or null.
Json post_chat(server::HttpClient& c, const Json& messages) {
  const Json body = {
      {"model", "anchorage-small"}, {"messages", messages}, {"max_tokens", 8}, {"temperature", 0}};
  bench::PostResult r = bench::post_json(c, "/v1/chat/completions", body);
  if (!r.ok) {
    std::fprintf(stderr, "overhead_bench: HTTP %d\n", r.status);
    return nullptr;
  }
  const Json& usage = r.body["usage"];
  Json out = usage["anchorage"]["timings"];
  out["wall_ms"] = r.wall_ms;
  out["prompt_tokens"] = usage["prompt_tokens"];
  out["reread"] = usage["anchorage"]["cache"]["reread"];
  out["source"] = usage["anchorage"]["cache"]["source"];
  // From the prefill's end to the first token out of the engine.
  out["after_prefill_ms"] = out.value("first_token_ms", 0.0) - out.value("queue_ms", 0.0) -
                            out.value("cache_begin_ms", 0.0) - out.value("prefill_ms", 0.0);
  return out;
}

// One server with `caches` on or off: the cold request, then (caches on) the resume pair.
Json run_server(const Args& a, server::ServedModel& model, bool caches, uint64_t salt) {
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.cache.enabled = caches;
  bench::InProcessServer srv(so, model);
  if (core::Status b = srv.start(); !b.is_ok()) {
    std::fprintf(stderr, "overhead_bench: bind: %s\n", b.to_string().c_str());
    return nullptr;
  }
  bench::Filler f(uint64_t(a.seed) * 977 + salt);
  Json out = Json::object();
  out["cold"] =
      post_chat(srv.client(),
                Json::array({{{"role", "user"}, {"content", filler_tokens(f, a.prompt_tokens)}}}));
  if (caches) {
    Json messages =
        Json::array({{{"role", "user"}, {"content", filler_tokens(f, a.resume_context)}}});
    bench::PostResult first = bench::post_json(srv.client(), "/v1/chat/completions",
                                               {{"model", "anchorage-small"},
                                                {"messages", messages},
                                                {"max_tokens", 8},
                                                {"temperature", 0}});
    if (first.ok) {
      messages.push_back(bench::assistant_message(first.body));
      messages.push_back({{"role", "user"}, {"content", filler_tokens(f, a.resume_tokens)}});
      out["resume"] = post_chat(srv.client(), messages);
    }
  }
  (void)srv.stop();
  return out;
}

// The engine alone: a prefill of `n` tokens at depth `depth` (ms), and one copy of the
// state's sections at memcpy speed (ms), best of three each.
Json engine_floor(engine::Engine& e, int64_t depth, int64_t n) {
  std::vector<int32_t> tokens(size_t(depth + n));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(1000 + (i * 7919) % 50000);
  double prefill_ms = 1e30;
  for (int r = 0; r < 3; ++r) {
    e.reset();
    if (!e.prefill(std::span<const int32_t>(tokens).first(size_t(depth))).is_ok()) return nullptr;
    const int64_t t0 = core::now_ns();
    if (!e.prefill(std::span<const int32_t>(tokens).subspan(size_t(depth))).is_ok()) return nullptr;
    prefill_ms = std::min(prefill_ms, double(core::now_ns() - t0) * 1e-6);
  }
  e.reset();
  const int64_t bytes = e.cost().section_bytes;
  std::vector<char> from(size_t(bytes), 1), to(size_t(bytes), 0);
  double copy_ms = 1e30;
  for (int r = 0; r < 3; ++r) {
    const int64_t t0 = core::now_ns();
    std::memcpy(to.data(), from.data(), from.size());
    copy_ms = std::min(copy_ms, double(core::now_ns() - t0) * 1e-6);
  }
  return {{"prefill_ms", prefill_ms}, {"state_bytes", bytes}, {"state_copy_ms", copy_ms}};
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: overhead_bench [--preset small] [--prompt-tokens 8000] "
                 "[--resume-context 6000] [--resume-tokens 200] [--reps 2] [--threads 0] "
                 "[--seed 1] [--capacity 16384]\n");
    return 2;
  }
  core::set_log_level(core::LogLevel::kWarn);
  std::unique_ptr<server::ServedModel> loaded =
      bench::load_preset_model("overhead_bench", a.preset, uint64_t(a.seed), a.capacity, a.threads,
                               std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json");
  if (loaded == nullptr) return 1;
  server::ServedModel& model = *loaded;
  const std::string load_start = bench::loadavg();
  Json reps = Json::array();
  std::vector<double> cold_ratio, after_prefill, resume_ratio;
  for (int64_t r = 0; r < a.reps; ++r) {
    Json rep = Json::object();
    for (int k = 0; k < 2; ++k) {
      const bool caches = (k == 0) == (r % 2 == 0);
      rep[caches ? "caches" : "no_cache"] = run_server(a, model, caches, uint64_t(r * 2 + k));
    }
    // Copies: adding "engine" below moves the document's members.
    const Json on = rep["caches"];
    const Json off = rep["no_cache"];
    if (on.is_null() || off.is_null() || on["cold"].is_null() || off["cold"].is_null()) return 1;
    // The floor reads what the follow-up read, at the depth it resumed from.
    if (on.contains("resume") && !on["resume"].is_null()) {
      const int64_t reread = on["resume"]["reread"].get<int64_t>();
      rep["engine"] = engine_floor(*model.engine,
                                   on["resume"]["prompt_tokens"].get<int64_t>() - reread, reread);
    }
    cold_ratio.push_back(on["cold"]["first_token_ms"].get<double>() /
                         off["cold"]["first_token_ms"].get<double>());
    after_prefill.push_back(on["cold"]["after_prefill_ms"].get<double>());
    if (rep.contains("engine") && !rep["engine"].is_null()) {
      const Json& e = rep["engine"];
      const double floor = e["prefill_ms"].get<double>() + e["state_copy_ms"].get<double>();
      resume_ratio.push_back(on["resume"]["first_token_ms"].get<double>() / floor);
    }
    reps.push_back(std::move(rep));
  }
  const Json doc = {{"bench", "overhead"},
                    {"preset", a.preset},
                    {"prompt_tokens", a.prompt_tokens},
                    {"resume_context", a.resume_context},
                    {"resume_tokens", a.resume_tokens},
                    {"threads", model.engine->n_threads()},
                    {"reps", reps},
                    {"summary",
                     {{"cold_ttft_caches_over_no_cache_median", bench::median(cold_ratio)},
                      {"cold_after_prefill_ms_median", bench::median(after_prefill)},
                      {"resume_ttft_over_floor_median", bench::median(resume_ratio)}}},
                    {"loadavg_start", load_start},
                    {"loadavg_end", bench::loadavg()}};
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

// overhead_bench: what the server costs around the engine (issue 14 §3; docs/performance.md
// "Overheads around the engine"). Prints ONE JSON document on stdout.
//
// The model is the `small` preset with random weights and the real Qwen3 tokenizer
// (server::load_served_model, as `anchorage serve`); an HttpServer runs in this process on
// 127.0.0.1 and an ephemeral port. Each repeat starts a fresh server per configuration, in
// alternating order (no_cache, caches, plain, then plain, caches, no_cache, ...: the machine is
// shared, so the figures are ratios of neighbours):
//   cold     one chat request of --prompt-tokens tokens of filler the server has never seen,
//            max_tokens 8: caches on (the defaults) against --no-cache. Its usage timings split
//            the time into queue, caches before the prefill, the prefill (and the caches'
//            share of it: the states taken at its lines), from the prefill's end to the first
//            token, decode, and the caches after the generation.
//   resume   (caches only) a conversation of --resume-context tokens, then, --pause-ms after
//            its answer (a user reading it), a follow-up adding about --resume-tokens: its time
//            to first token against the engine's own prefill of the tokens it re-read at the
//            depth it resumed from, plus one state copy at memcpy speed (both measured here on
//            the same engine, between the servers). A third server, `plain`, runs the same
//            pair with no spare state buffers and every branch point cut in the prefill (the
//            caches before issue 14 §3's follow-up work), right before or after `caches`.
//   decode   (no_cache and caches) a 16-token prompt answered with --decode-tokens greedy
//            tokens (ignore_eos): the server's decode time per step against the engine's own
//            (engine::generate on the same engine, between the servers, best of three): what
//            the server adds to every step (sampling is the same loop; the rest is the token
//            sink, the stream and the drafter).
// Flags: --preset small  --prompt-tokens 8000  --resume-context 6000  --resume-tokens 200
//        --pause-ms 500  --decode-tokens 32  --reps 2  --threads 0 (all)  --seed 1
//        --capacity 16384
// Google Benchmark's --benchmark_* flags (scripts/bench.sh) are accepted and ignored.

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "cache/section_pool.h"
#include "cache/state_copy.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "engine/generation.h"
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
  int64_t pause_ms = 500;
  int64_t decode_tokens = 32;
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
                      : f == "--pause-ms"       ? &a->pause_ms
                      : f == "--decode-tokens"  ? &a->decode_tokens
                      : f == "--reps"           ? &a->reps
                      : f == "--threads"        ? &a->threads
                      : f == "--capacity"       ? &a->capacity
                      : f == "--seed"           ? &a->seed
                                                : nullptr;
    if (target == nullptr) return false;
    if (std::from_chars(v.data(), v.data() + v.size(), *target).ec != std::errc()) return false;
  }
  return a->prompt_tokens > 0 && a->resume_context > 0 && a->resume_tokens > 0 && a->reps > 0 &&
         a->pause_ms >= 0 && a->decode_tokens >= 2;
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

enum class Config { kCaches, kNoCache, kPlain };

// The decode figure's prompt (tokens): short, so the steps are the figure.
constexpr int64_t kDecodePromptTokens = 16;

// One server: the cold request (not for kPlain), then (caches on) the resume pair. kCaches and
// kPlain with the same salt send the same prompts.
Json run_server(const Args& a, server::ServedModel& model, Config config, uint64_t salt) {
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.cache.enabled = config != Config::kNoCache;
  if (config == Config::kPlain) {
    so.cache.spare_sets = 0;
    so.cache.resident.defer_branch_tokens = 0;
  }
  // The last server's copies went to the process's pool when it stopped: none is handed on.
  cache::SectionPool::instance().clear();
  bench::InProcessServer srv(so, model);
  if (core::Status b = srv.start(); !b.is_ok()) {
    std::fprintf(stderr, "overhead_bench: bind: %s\n", b.to_string().c_str());
    return nullptr;
  }
  bench::Filler f(uint64_t(a.seed) * 977 + salt);
  Json out = Json::object();
  const Json cold =
      Json::array({{{"role", "user"}, {"content", filler_tokens(f, a.prompt_tokens)}}});
  if (config != Config::kPlain) out["cold"] = post_chat(srv.client(), cold);
  if (config != Config::kPlain) {
    const Json body = {{"model", "anchorage-small"},
                       {"prompt", filler_tokens(f, kDecodePromptTokens)},
                       {"max_tokens", a.decode_tokens},
                       {"temperature", 0},
                       {"ignore_eos", true}};
    bench::PostResult r = bench::post_json(srv.client(), "/v1/completions", body);
    if (r.ok) {
      const Json& usage = r.body["usage"];
      const int64_t steps = usage["completion_tokens"].get<int64_t>() - 1;
      const double decode_ms = usage["anchorage"]["timings"]["decode_ms"].get<double>();
      out["decode"] = {{"completion_tokens", steps + 1},
                       {"decode_ms", decode_ms},
                       {"step_ms", steps > 0 ? decode_ms / double(steps) : 0.0}};
    }
  }
  if (so.cache.enabled) {
    Json messages =
        Json::array({{{"role", "user"}, {"content", filler_tokens(f, a.resume_context)}}});
    bench::PostResult first = bench::post_json(srv.client(), "/v1/chat/completions",
                                               {{"model", "anchorage-small"},
                                                {"messages", messages},
                                                {"max_tokens", 8},
                                                {"temperature", 0}});
    if (first.ok) {
      std::this_thread::sleep_for(std::chrono::milliseconds(a.pause_ms));
      messages.push_back(bench::assistant_message(first.body));
      messages.push_back({{"role", "user"}, {"content", filler_tokens(f, a.resume_tokens)}});
      out["resume"] = post_chat(srv.client(), messages);
    }
  }
  (void)srv.stop();
  return out;
}

// The engine alone: a prefill of `n` tokens at depth `depth` (ms), and one copy of the
// state's sections at memcpy speed (ms), best of three each. Then where a resume's time above
// that floor goes (issue 14 §3), each part measured apart, best of three:
//   cut_ms          the same prefill cut where a follow-up's resume cuts it: a few tokens in
//                   (the last user message's start), one token before the end, and the end;
//   cut_capture_ms  the same cuts with a state copy taken at each into buffers never
//                   touched before (what a capture costs when the pool has nothing to give);
//   cut_pooled_ms   the same with the copies' buffers recycled (faulted in already);
//   first_touch_ms  faulting in one copy's buffers (the allocation alone, no copy).
Json engine_floor(engine::Engine& e, int64_t depth, int64_t n) {
  std::vector<int32_t> tokens(size_t(depth + n));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(1000 + (i * 7919) % 50000);
  const std::span<const int32_t> head = std::span<const int32_t>(tokens).first(size_t(depth));
  const std::span<const int32_t> tail = std::span<const int32_t>(tokens).subspan(size_t(depth));
  // The follow-up's lines: its last user message starts a few tokens after the end anchor
  // (the answer's last token and the template's turn markers), and one token before its end.
  constexpr int64_t kHeadCut = 5;
  engine::PrefillOptions cut;
  if (n > kHeadCut + 1) cut.extra_lines = {depth + kHeadCut, depth + n - 1};
  // mode 0: no captures; 1: captures into fresh buffers; 2: captures into recycled buffers.
  // The head once: every timed prefill starts from its state (rows below `depth` stay).
  e.reset();
  if (!e.prefill(head).is_ok()) return nullptr;
  const cache::SectionCopy at_depth = cache::SectionCopy::capture(e);
  auto timed = [&](const engine::PrefillOptions* lines, int mode) -> double {
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      if (!at_depth.write_back(e).is_ok() || !e.resume_at(depth).is_ok()) return -1.0;
      cache::SectionPool::instance().clear();
      if (mode == 2) {  // as many sets as the prefill captures, faulted in and released
        std::vector<cache::SectionCopy> warm(lines->extra_lines.size() + 1);
        for (cache::SectionCopy& w : warm) w = cache::SectionCopy::capture(e);
      }
      std::vector<cache::SectionCopy> kept;
      engine::PrefillOptions o = lines != nullptr ? *lines : engine::PrefillOptions{};
      if (mode > 0)
        o.on_anchor = [&](int64_t, bool) { kept.push_back(cache::SectionCopy::capture(e)); };
      const int64_t t0 = core::now_ns();
      if (!e.prefill(tail, o).is_ok()) return -1.0;
      best = std::min(best, double(core::now_ns() - t0) * 1e-6);
    }
    cache::SectionPool::instance().clear();
    return best;
  };
  const double prefill_ms = timed(nullptr, 0);
  const double cut_ms = timed(&cut, 0);
  const double cut_capture_ms = timed(&cut, 1);
  const double cut_pooled_ms = timed(&cut, 2);
  if (prefill_ms < 0 || cut_ms < 0 || cut_capture_ms < 0 || cut_pooled_ms < 0) return nullptr;
  e.reset();
  const int64_t bytes = e.cost().section_bytes;
  std::vector<char> from(size_t(bytes), 1), to(size_t(bytes), 0);
  double copy_ms = 1e30;
  for (int r = 0; r < 3; ++r) {
    const int64_t t0 = core::now_ns();
    std::memcpy(to.data(), from.data(), from.size());
    copy_ms = std::min(copy_ms, double(core::now_ns() - t0) * 1e-6);
  }
  std::vector<size_t> sizes;
  for (const core::TensorSpec& spec : e.layout().sections) sizes.push_back(size_t(spec.bytes()));
  double first_touch_ms = 1e30;
  for (int r = 0; r < 3; ++r) {
    cache::SectionPool::instance().clear();
    const int64_t t0 = core::now_ns();
    std::vector<core::AlignedBuffer> fresh = cache::SectionPool::instance().take(sizes);
    first_touch_ms = std::min(first_touch_ms, double(core::now_ns() - t0) * 1e-6);
  }
  return {{"prefill_ms", prefill_ms},
          {"state_bytes", bytes},
          {"state_sections", sizes.size()},
          {"state_copy_ms", copy_ms},
          {"cut_ms", cut_ms},
          {"cut_capture_ms", cut_capture_ms},
          {"cut_pooled_ms", cut_pooled_ms},
          {"first_touch_ms", first_touch_ms}};
}

// The engine's own decode: a prompt of kDecodePromptTokens, then `tokens` greedy tokens with no
// stop id (engine::generate, as the server runs it, without its token sink and drafter); ms a
// decode step, best of three.
double engine_decode_step_ms(engine::Engine& e, int64_t tokens) {
  std::vector<int32_t> prompt(static_cast<size_t>(kDecodePromptTokens));
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int32_t(1000 + (i * 7919) % 50000);
  engine::GenerationOptions o;
  o.max_tokens = tokens;
  o.sampling.temperature = 0.0;
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    e.reset();
    auto g = engine::generate(e, prompt, o);
    if (!g || g->decode_steps < 1) return -1.0;
    best = std::min(best, double(g->decode_ns) * 1e-6 / double(g->decode_steps));
  }
  e.reset();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, &a)) {
    std::fprintf(
        stderr,
        "usage: overhead_bench [--preset small] [--prompt-tokens 8000] "
        "[--resume-context 6000] [--resume-tokens 200] [--pause-ms 500] [--decode-tokens 32] "
        "[--reps 2] [--threads 0] "
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
  std::vector<double> cold_ratio, after_prefill, resume_ratio, plain_ratio, cut_extra,
      capture_fresh, capture_pooled, decode_caches, decode_no_cache;
  for (int64_t r = 0; r < a.reps; ++r) {
    Json rep = Json::object();
    // no_cache, caches, plain; then plain, caches, no_cache; ...: `caches` next to both.
    const Config order[3] = {Config::kNoCache, Config::kCaches, Config::kPlain};
    for (int k = 0; k < 3; ++k) {
      const Config c = order[r % 2 == 0 ? k : 2 - k];
      const char* name = c == Config::kCaches  ? "caches"
                         : c == Config::kPlain ? "plain"
                                               : "no_cache";
      rep[name] = run_server(a, model, c, uint64_t(r * 2 + (c == Config::kNoCache)));
    }
    // Copies: adding "engine" below moves the document's members.
    const Json on = rep["caches"];
    const Json off = rep["no_cache"];
    const Json plain = rep["plain"];
    if (on.is_null() || off.is_null() || on["cold"].is_null() || off["cold"].is_null()) return 1;
    // The floor reads what the follow-up read, at the depth it resumed from.
    if (on.contains("resume") && !on["resume"].is_null()) {
      const int64_t reread = on["resume"]["reread"].get<int64_t>();
      rep["engine"] = engine_floor(*model.engine,
                                   on["resume"]["prompt_tokens"].get<int64_t>() - reread, reread);
    }
    // The engine's own decode step, between the servers as the prefill floor.
    const double engine_step_ms = engine_decode_step_ms(*model.engine, a.decode_tokens);
    rep["engine_decode_step_ms"] = engine_step_ms;
    if (engine_step_ms > 0 && on.contains("decode") && off.contains("decode")) {
      decode_caches.push_back(on["decode"]["step_ms"].get<double>() / engine_step_ms);
      decode_no_cache.push_back(off["decode"]["step_ms"].get<double>() / engine_step_ms);
    }
    cold_ratio.push_back(on["cold"]["first_token_ms"].get<double>() /
                         off["cold"]["first_token_ms"].get<double>());
    after_prefill.push_back(on["cold"]["after_prefill_ms"].get<double>());
    if (rep.contains("engine") && !rep["engine"].is_null()) {
      const Json& e = rep["engine"];
      const double floor = e["prefill_ms"].get<double>() + e["state_copy_ms"].get<double>();
      resume_ratio.push_back(on["resume"]["first_token_ms"].get<double>() / floor);
      if (plain.contains("resume") && !plain["resume"].is_null())
        plain_ratio.push_back(plain["resume"]["first_token_ms"].get<double>() / floor);
      const double cut = e["cut_ms"].get<double>();
      cut_extra.push_back(cut - e["prefill_ms"].get<double>());
      capture_fresh.push_back(e["cut_capture_ms"].get<double>() - cut);
      capture_pooled.push_back(e["cut_pooled_ms"].get<double>() - cut);
    }
    reps.push_back(std::move(rep));
  }
  const Json doc = {{"bench", "overhead"},
                    {"preset", a.preset},
                    {"prompt_tokens", a.prompt_tokens},
                    {"resume_context", a.resume_context},
                    {"resume_tokens", a.resume_tokens},
                    {"pause_ms", a.pause_ms},
                    {"decode_tokens", a.decode_tokens},
                    {"threads", model.engine->n_threads()},
                    {"reps", reps},
                    {"summary",
                     {{"cold_ttft_caches_over_no_cache_median", bench::median(cold_ratio)},
                      {"cold_after_prefill_ms_median", bench::median(after_prefill)},
                      {"resume_ttft_over_floor_median", bench::median(resume_ratio)},
                      {"resume_plain_ttft_over_floor_median", bench::median(plain_ratio)},
                      // The floor's parts (engine_floor): the follow-up's cuts, and its three
                      // captures into fresh and into recycled buffers.
                      {"floor_cut_extra_ms_median", bench::median(cut_extra)},
                      {"floor_captures_fresh_ms_median", bench::median(capture_fresh)},
                      {"floor_captures_pooled_ms_median", bench::median(capture_pooled)},
                      // A decode step over HTTP against the engine's own (issue 14 §3).
                      {"decode_step_caches_over_engine_median", bench::median(decode_caches)},
                      {"decode_step_no_cache_over_engine_median", bench::median(decode_no_cache)}}},
                    {"loadavg_start", load_start},
                    {"loadavg_end", bench::loadavg()}};
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

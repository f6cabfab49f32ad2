// cache_bench: time to first token of a second turn, cold against resumed from the caches,
// on the `small` preset (f32 weights and K/V by default). Prints ONE JSON document on stdout.
//
// For each context C: turn 1 prefills C random tokens through the ResidentPrefix (anchors and
// the end-of-prefill anchor), generates --gen-tokens greedy tokens, keeps the end anchor and
// puts a session entry into the StateStore. Turn 2 is turn 1's prompt, its whole answer and
// --new-tokens new tokens (~200: a tool result or a user message). It is then served four ways
// on the same engine, in this order, each timed from the restore to the first token's argmax:
//   store           the StateStore's session entry (sections + rows copied back);
//   resident_end    the end anchor of the rows in place (what a real second turn takes);
//   resident_anchor a copy whose answer differs from its first token: the body anchor at the
//                   end of turn 1's prefill, re-reading the answer and the new tokens;
//   cold            a reset engine reading the whole prompt.
// Each is measured once: compare them as ratios inside one run (the machine is shared).
// resident_end and store must give the cold logits bit for bit (checked, `bit_equal_*`); the
// Planner's pick among the tiers is reported as `planned_source`.
//
// Flags: --contexts 1024,8192,32768  --new-tokens 200  --gen-tokens 8  --weights f32
//        --kv-dtype f32  --threads 0 (all)  --preset small  --seed 1. Google Benchmark's
// --benchmark_* flags (scripts/bench.sh) are accepted and ignored.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.h"
#include "cache/planner.h"
#include "cache/resident_prefix.h"
#include "cache/state_store.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace {

using anchorage::bench::parse_i64;

using namespace anchorage;
using nlohmann::json;

struct BenchArgs {
  std::vector<int64_t> contexts = {1024, 8192, 32768};
  int64_t new_tokens = 200;
  int64_t gen_tokens = 8;
  std::string weights = "f32";
  std::string kv = "f32";
  std::string preset = "small";
  int64_t threads = 0;
  uint64_t seed = 1;
};

bool parse_args(int argc, char** argv, BenchArgs* a) {
  for (int i = 1; i < argc; ++i) {
    std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (f == "--contexts") {
      a->contexts.clear();
      while (!v.empty()) {
        const size_t c = v.find(',');
        if (!parse_i64(v.substr(0, c), &n) || n < 64) return false;
        a->contexts.push_back(n);
        v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
      }
      if (a->contexts.empty()) return false;
      std::sort(a->contexts.begin(), a->contexts.end());
    } else if (f == "--new-tokens" || f == "--gen-tokens" || f == "--threads" || f == "--seed") {
      if (!parse_i64(v, &n) || n < 0) return false;
      if (f == "--new-tokens") a->new_tokens = std::max<int64_t>(n, 1);
      if (f == "--gen-tokens") a->gen_tokens = std::max<int64_t>(n, 2);
      if (f == "--threads") a->threads = n;
      if (f == "--seed") a->seed = uint64_t(n);
    } else if (f == "--weights") {
      a->weights = std::string(v);
    } else if (f == "--kv-dtype") {
      a->kv = std::string(v);
    } else if (f == "--preset") {
      a->preset = std::string(v);
    } else {
      return false;
    }
  }
  return true;
}

std::vector<int32_t> random_ids(int64_t n, int64_t vocab, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = int32_t(rng.next_u64() % uint64_t(vocab));
  return t;
}

bool ok(const core::Status& s, const char* what) {
  if (s.is_ok()) return true;
  std::fprintf(stderr, "cache_bench: %s: %s\n", what, s.to_string().c_str());
  return false;
}

// One timed way of serving turn 2: the milliseconds to the first token and the logits.
struct Served {
  double ttft_ms = 0.0;
  int64_t resume_at = 0;
  std::vector<float> logits;
  bool ok = false;
};

Served finish(engine::Engine& e, std::span<const int32_t> prompt, int64_t at, int64_t t0,
              const engine::PrefillOptions& po = {}) {
  Served s;
  s.resume_at = at;
  if (!ok(e.prefill(prompt.subspan(size_t(at)), po), "prefill")) return s;
  volatile int32_t first = engine::Sampler::argmax(e.logits());
  (void)first;
  s.ttft_ms = double(core::now_ns() - t0) * 1e-6;
  s.logits.assign(e.logits().begin(), e.logits().end());
  s.ok = true;
  return s;
}

Served via_resident(engine::Engine& e, cache::ResidentPrefix& rp, std::span<const int32_t> prompt) {
  const int64_t t0 = core::now_ns();
  const cache::ResumeOffer o = rp.offer(prompt, "bench");
  if (!ok(rp.begin(e, prompt, "bench", 1, o), "resident begin")) return {};
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool end) { rp.on_anchor(e, pos, end); };
  return finish(e, prompt, o.resume_at, t0, po);
}

Served via_store(engine::Engine& e, cache::StateStore& store, std::span<const int32_t> prompt) {
  const int64_t t0 = core::now_ns();
  const cache::ResumeOffer o = store.offer(prompt, "bench");
  e.reset();
  auto r = store.take(e, o);
  if (!r.has_value()) {
    ok(r.error(), "store take");
    return {};
  }
  return finish(e, prompt, o.resume_at, t0);
}

Served cold(engine::Engine& e, std::span<const int32_t> prompt) {
  const int64_t t0 = core::now_ns();
  e.reset();
  return finish(e, prompt, 0, t0);
}

bool same_logits(const Served& a, const Served& b) {
  return a.ok && b.ok && a.logits.size() == b.logits.size() &&
         std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * sizeof(float)) == 0;
}

json served_json(const Served& s, const Served& cold_run, int64_t prompt_tokens) {
  return {{"resume_at", s.resume_at},
          {"reread_tokens", prompt_tokens - s.resume_at},
          {"ttft_ms", s.ttft_ms},
          {"speedup_vs_cold", s.ttft_ms > 0 ? cold_run.ttft_ms / s.ttft_ms : 0.0}};
}

json bench_context(const BenchArgs& a, engine::Engine& e, int64_t ctx) {
  const int64_t vocab = e.vocab_size();
  cache::ResidentPrefix rp(cache::ResidentOptions{});
  cache::StateStore store(cache::StateStoreOptions{});
  cache::Planner planner;
  planner.add_source(&rp);
  planner.add_source(&store);

  // Turn 1: cold prefill through the resident prefix, a short greedy answer.
  const std::vector<int32_t> p1 = random_ids(ctx, vocab, a.seed * 1000 + uint64_t(ctx));
  if (!ok(rp.begin(e, p1, "bench", a.gen_tokens, cache::ResumeOffer{}), "turn 1 begin")) return {};
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool end) { rp.on_anchor(e, pos, end); };
  int64_t t0 = core::now_ns();
  if (!ok(e.prefill(p1, po), "turn 1 prefill")) return {};
  const double turn1_ms = double(core::now_ns() - t0) * 1e-6;
  planner.note_prefill(ctx, core::now_ns() - t0);
  std::vector<int32_t> answer;
  int32_t tok = engine::Sampler::argmax(e.logits());
  for (int64_t i = 0; i < a.gen_tokens; ++i) {
    answer.push_back(tok);
    if (i + 1 == a.gen_tokens) break;  // the last sampled token is not decoded
    if (!ok(e.decode(tok), "decode")) return {};
    tok = engine::Sampler::argmax(e.logits());
  }
  std::vector<int32_t> forwarded = p1;
  forwarded.insert(forwarded.end(), answer.begin(), answer.end() - 1);
  rp.keep_end(e, forwarded, {});
  t0 = core::now_ns();
  const cache::StorePut put = store.put_session(e, forwarded, cache::StateStore::kUntainted, "b");
  const double put_ms = double(core::now_ns() - t0) * 1e-6;
  if (!ok(rp.finish_request(e), "finish")) return {};

  // Turn 2: the whole conversation so far and the new tokens; and a copy that parts at the
  // answer's first token (its other tokens and the new ones are the same).
  const std::vector<int32_t> fresh = random_ids(a.new_tokens, vocab, a.seed * 7 + uint64_t(ctx));
  std::vector<int32_t> p2 = p1;
  p2.insert(p2.end(), answer.begin(), answer.end());
  p2.insert(p2.end(), fresh.begin(), fresh.end());
  std::vector<int32_t> p2b = p2;
  p2b[size_t(ctx)] = (p2b[size_t(ctx)] + 1) % int32_t(vocab);

  const cache::Plan plan = planner.plan(p2, "bench", cache::OfferScope::global());
  // The store first: it leaves the resident prefix as turn 1 left it.
  const Served from_store = via_store(e, store, p2);
  const Served end = via_resident(e, rp, p2);
  const Served anchor = via_resident(e, rp, p2b);
  const Served cold_run = cold(e, p2);
  const int64_t n2 = int64_t(p2.size());
  std::fprintf(stderr,
               "cache_bench: %lld tokens: cold %.1f ms, end %.1f ms, anchor %.1f ms, store %.1f "
               "ms\n",
               (long long)ctx, cold_run.ttft_ms, end.ttft_ms, anchor.ttft_ms, from_store.ttft_ms);
  return {{"context", ctx},
          {"turn2_prompt_tokens", n2},
          {"turn1_prefill_ms", turn1_ms},
          {"planned_source", std::string(cache::name(plan.chosen.source))},
          {"planned_cached_tokens", plan.cached_tokens},
          {"planned_reread_eta_ms", plan.reread_eta_ms},
          {"store_put", cache::store_put_name(put)},
          {"store_put_ms", put_ms},
          {"store_entry_bytes", cache::StateStore::entry_bytes_for(e, int64_t(forwarded.size()))},
          {"cold", {{"ttft_ms", cold_run.ttft_ms}, {"reread_tokens", n2}}},
          {"resident_end", served_json(end, cold_run, n2)},
          {"resident_anchor", served_json(anchor, cold_run, n2)},
          {"store", served_json(from_store, cold_run, n2)},
          {"bit_equal_resident_end", same_logits(end, cold_run)},
          {"bit_equal_store", same_logits(from_store, cold_run)}};
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: cache_bench [--contexts 1024,8192,32768] [--new-tokens 200] "
                 "[--gen-tokens 8] [--weights f32] [--kv-dtype f32] [--threads 0] "
                 "[--preset small] [--seed 1]\n");
    return 2;
  }
  auto cfg = model::qwen35::qwen35_preset(a.preset);
  model::qwen35::Qwen35Options mo;
  if (!cfg.has_value() || !core::parse_dtype(a.weights, &mo.weight_dtype) ||
      !core::parse_dtype(a.kv, &mo.kv_dtype)) {
    std::fprintf(stderr, "cache_bench: unknown preset or dtype\n");
    return 2;
  }
  auto arch = model::qwen35::make_random_qwen35(*cfg, a.seed, mo);
  if (!arch.has_value()) {
    std::fprintf(stderr, "cache_bench: %s\n", arch.error().to_string().c_str());
    return 1;
  }
  const int64_t capacity = a.contexts.back() + a.gen_tokens + a.new_tokens + 64;
  auto eng = engine::Engine::create(std::move(arch.value()),
                                    engine::EngineOptions{.capacity = capacity,
                                                          .prefill_chunk = 1024,
                                                          .anchor_spacing = 1024,
                                                          .n_threads = int(a.threads)});
  if (!eng.has_value()) {
    std::fprintf(stderr, "cache_bench: %s\n", eng.error().to_string().c_str());
    return 1;
  }
  engine::Engine& e = **eng;
  json contexts = json::array();
  for (int64_t ctx : a.contexts) contexts.push_back(bench_context(a, e, ctx));
  json doc = {{"benchmark", "cache"},
              {"preset", a.preset},
              {"weight_dtype", a.weights},
              {"kv_dtype", a.kv},
              {"threads", e.n_threads()},
              {"isa", std::string(core::isa_name(core::active_isa()))},
              {"prefill_chunk", 1024},
              {"state_section_bytes", e.cost().section_bytes},
              {"kv_bytes_per_token", e.cost().bytes_per_token},
              {"new_tokens", a.new_tokens},
              {"gen_tokens", a.gen_tokens},
              {"contexts", contexts}};
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

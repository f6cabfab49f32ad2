// session_bench: tokens re-read and time per turn of an agent-shaped session, through the real
// HTTP path (docs/performance.md "Caches: time to first token and re-read tokens"). Prints ONE
// JSON document on stdout.
//
// The model is the `small` preset with random weights and the real Qwen3 tokenizer
// (server::load_served_model, as `anchorage serve`); an HttpServer runs in this process on
// 127.0.0.1 and an ephemeral port, and a client POSTs /v1/chat/completions to it. The session
// is shaped like the opencode traces (/work/shared/traces/README.md) but made of deterministic
// filler text: a system prompt and 10 tools (~8k tokens rendered, like the traces' 31k
// characters), a user task, then per turn the answer exactly as the server returned it
// (content, reasoning_content, tool_calls) and a tool result of a few hundred tokens, or every
// --user-every turns a new user message (the Qwen3 template then drops the reasoning of the
// earlier turns, if any; the client does not work around it). Greedy, --max-tokens answers, one
// prompt_cache_key. After the session one request of a new session with the same system
// prompt and tools (opencode's second session) is sent apart: the `probe`, where a body
// anchor below the shared head is what serves, so the anchor spacing shows.
//
// Per turn: usage.prompt_tokens, cached_tokens, usage.anchorage.cache {tier, source, cached,
// reread, exact, aligned}, the timings and the request's wall time; after each turn the bytes
// held (GET /v1/cache/stats). Configurations, one server each, in one process (--configs):
//   end_on       end anchor on, anchor spacing 1,024, state store off
//   end_off      end anchor off, spacing 1,024, store off
//   spacing_512  end anchor on, spacing 512, store off (engine anchor grid 512)
//   spacing_256  end anchor on, spacing 256, store off (engine anchor grid 256)
//   default      the server's defaults: exact resume policy, end anchor on, spacing 1,024,
//                store on
//   rows         the defaults with --resume-policy rows (serves the rows' tokens where the
//                client's text matches them)
//   end_off_store end anchor off, spacing 1,024, store on
//   no_cache     CacheOptions::enabled = false: every turn reads its whole prompt
// The store is off in the first four so the resident tier's figures are its own (the store's
// session snapshot would serve what the end anchor serves). Greedy answers are a function of
// the tokens the engine reads, so configurations that read the same tokens must return the
// same answers: `answer_groups` lists the configurations whose 20 answers are identical, and
// `first_divergent_turn` the first turn that differs from the first configuration's. An end
// anchor aligned by text (`aligned: text`, docs/end-alignment.md) serves the rows' own tokens
// for the previous answer, not the client copy's tokenization, so it reads other tokens than
// a cold server whenever the answer's tokens are not the tokenizer's canonical encoding.
//
// Flags: --preset small  --turns 20  --max-tokens 48  --threads 0 (all)  --seed 1
//        --user-every 7  --capacity 32768  --tool-choice auto  --reasoning-budget -1 (none)
//        --configs end_on,end_off,spacing_512,spacing_256,default (no_cache: ~4 more minutes).
// Google Benchmark's --benchmark_* flags (scripts/bench.sh) are accepted and ignored.

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "core/clock.h"
#include "core/log.h"
#include "engine/engine.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace {

using namespace anchorage;
using bench::Json;

struct BenchArgs {
  std::string preset = "small";
  int64_t turns = 20;
  int64_t max_tokens = 48;
  int64_t threads = 0;
  uint64_t seed = 1;
  int64_t user_every = 7;  // a new user message at turns 8, 15, ... (the rest are tool results)
  int64_t capacity = 32768;
  // "required" makes the random model's answers agent-shaped (<think>, then a tool call);
  // opencode itself sends "auto".
  std::string tool_choice = "auto";
  int64_t reasoning_budget = -1;  // sent when >= 0
  std::vector<std::string> configs = {"end_on", "end_off", "spacing_512", "spacing_256", "default"};
};

bool parse_i64(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_args(int argc, char** argv, BenchArgs* a) {
  for (int i = 1; i < argc; ++i) {
    std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (f == "--preset") {
      a->preset = std::string(v);
    } else if (f == "--tool-choice") {
      a->tool_choice = std::string(v);
    } else if (f == "--reasoning-budget") {
      if (!parse_i64(v, &a->reasoning_budget)) return false;
    } else if (f == "--configs") {
      a->configs.clear();
      while (!v.empty()) {
        const size_t c = v.find(',');
        a->configs.emplace_back(v.substr(0, c));
        v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
      }
      if (a->configs.empty()) return false;
    } else if (parse_i64(v, &n) && n >= 0) {
      if (f == "--turns")
        a->turns = std::max<int64_t>(n, 1);
      else if (f == "--max-tokens")
        a->max_tokens = std::max<int64_t>(n, 1);
      else if (f == "--threads")
        a->threads = n;
      else if (f == "--seed")
        a->seed = uint64_t(n);
      else if (f == "--user-every")
        a->user_every = n;
      else if (f == "--capacity")
        a->capacity = std::max<int64_t>(n, 1024);
      else
        return false;
    } else {
      return false;
    }
  }
  return true;
}

// The session's fixed head (system prompt and tools) and its inputs: inputs[0] the user task,
// inputs[t] the message the client adds after the answer of turn t (tool result or user).
struct SessionScript {
  Json system;
  Json tools = Json::array();
  std::vector<Json> inputs;
  std::vector<std::string> kinds;  // "user" or "tool", per input
  Json probe_user;                 // the new session's first message
};

SessionScript make_script(const BenchArgs& a) {
  bench::Filler f(a.seed * 7919 + 17);
  SessionScript s;
  bench::AgentHead head = bench::make_agent_head(f);
  s.system = {{"role", "system"}, {"content", std::move(head.system_text)}};
  s.tools = std::move(head.tools);
  s.inputs.push_back({{"role", "user"}, {"content", "\"" + f.words(24) + "\""}});
  s.kinds.push_back("user");
  for (int64_t t = 1; t < a.turns; ++t) {
    if (a.user_every > 0 && t % a.user_every == 0) {
      s.inputs.push_back(
          {{"role", "user"}, {"content", "\"" + f.words(30 + f.next() % 40) + "\""}});
      s.kinds.push_back("user");
    } else {
      // A few hundred tokens: a listing and some prose, sizes varying turn by turn.
      const int64_t lines = 6 + int64_t(f.next() % 14);
      s.inputs.push_back({{"role", "tool"}, {"content", f.listing(lines) + f.words(40)}});
      s.kinds.push_back("tool");
    }
  }
  s.probe_user = {{"role", "user"}, {"content", "\"" + f.words(28) + "\""}};
  return s;
}

struct ConfigSpec {
  std::string name;
  server::CacheOptions cache;
  int64_t engine_spacing = 1024;  // the engine's anchor grid (lines the prefill reports)
};

bool config_spec(const std::string& name, ConfigSpec* out) {
  ConfigSpec c;
  c.name = name;
  c.cache.store = false;
  if (name == "end_on") {
  } else if (name == "end_off") {
    c.cache.resident.end_anchor = false;
  } else if (name == "spacing_512" || name == "spacing_256") {
    c.engine_spacing = name == "spacing_512" ? 512 : 256;
    c.cache.resident.anchor_spacing = c.engine_spacing;
  } else if (name == "default") {
    c.cache.store = true;
  } else if (name == "rows") {
    c.cache.store = true;
    c.cache.resume_policy = server::ResumePolicy::kRows;
  } else if (name == "end_off_store") {
    c.cache.store = true;
    c.cache.resident.end_anchor = false;
  } else if (name == "no_cache") {
    c.cache.enabled = false;
  } else {
    return false;
  }
  *out = std::move(c);
  return true;
}

// The bytes the caches hold, from GET /v1/cache/stats (zeros with the caches off).
Json held_bytes(server::HttpClient& c) {
  auto r = c.Get("/v1/cache/stats");
  const Json s = r ? Json::parse(r->body, nullptr, false) : Json();
  if (!s.is_object() || !s.value("enabled", false)) {
    return {{"anchors", 0},
            {"anchor_bytes", 0},
            {"end_bytes", 0},
            {"store_bytes", 0},
            {"held_bytes", 0}};
  }
  return {{"anchors", s["resident"]["anchors"]},
          {"anchor_bytes", s["resident"]["anchor_bytes"]},
          {"end_bytes", s["resident"]["end_bytes"]},
          {"store_bytes", s["store"]["held_bytes"]},
          {"held_bytes", s["memory"]["held_bytes"]}};
}

// One request: its usage split and times; the assistant message as the client got it.
struct TurnResult {
  bool ok = false;
  Json row;
  Json assistant;
};

TurnResult post_turn(server::HttpClient& c, const BenchArgs& a, const SessionScript& s,
                     const Json& messages, const std::string& key) {
  Json body = {{"model", "anchorage-small"},   {"messages", messages},       {"tools", s.tools},
               {"tool_choice", a.tool_choice}, {"max_tokens", a.max_tokens}, {"temperature", 0},
               {"prompt_cache_key", key}};
  if (a.reasoning_budget >= 0) body["reasoning_budget"] = a.reasoning_budget;
  const bench::PostResult r = bench::post_json(c, "/v1/chat/completions", body);
  const double wall_ms = r.wall_ms;
  TurnResult out;
  if (!r.ok) return out;
  const Json& j = r.body;
  const Json& u = j["usage"];
  const Json& cache = u["anchorage"]["cache"];
  const Json& tm = u["anchorage"]["timings"];
  out.row = {{"prompt_tokens", u["prompt_tokens"]},
             {"cached_tokens", u["prompt_tokens_details"]["cached_tokens"]},
             {"reread", cache["reread"]},
             // The client's own prompt: differs from prompt_tokens (what the engine read) when
             // the rows policy served the rows' tokens (aligned text or replay).
             {"client_prompt_tokens", cache.value("client_prompt_tokens", u["prompt_tokens"])},
             {"served", cache["served"]},
             {"tier", cache["tier"]},
             {"source", cache["source"]},
             {"exact", cache["exact"]},
             {"aligned", cache["aligned"]},
             {"completion_tokens", u["completion_tokens"]},
             {"first_token_ms", tm["first_token_ms"]},
             {"prefill_ms", tm["prefill_ms"]},
             {"wall_ms", wall_ms}};
  out.assistant = bench::assistant_message(j);
  const Json& m = j["choices"][0]["message"];
  // The answer's shape, in counts only.
  out.row["answer"] = {
      {"content_bytes", m["content"].is_string() ? m["content"].get<std::string>().size() : 0},
      {"reasoning_bytes", m.value("reasoning_content", std::string()).size()},
      {"tool_calls", m.contains("tool_calls") ? m["tool_calls"].size() : 0},
      {"finish_reason", j["choices"][0]["finish_reason"]},
      {"hidden_tokens", cache["hidden"]}};
  out.ok = true;
  return out;
}

// The session's totals from its per-turn rows.
Json totals(const Json& turns) {
  int64_t reread = 0, reread_after_first = 0, prompt = 0, not_exact = 0, served_rows = 0;
  double wall = 0, wall_after_first = 0, first_token = 0, first_token_after_first = 0;
  Json sources = Json::object();
  for (size_t i = 0; i < turns.size(); ++i) {
    const Json& t = turns[i];
    reread += t["reread"].get<int64_t>();
    prompt += t["prompt_tokens"].get<int64_t>();
    wall += t["wall_ms"].get<double>();
    first_token += t["first_token_ms"].get<double>();
    if (i > 0) {
      wall_after_first += t["wall_ms"].get<double>();
      reread_after_first += t["reread"].get<int64_t>();
      first_token_after_first += t["first_token_ms"].get<double>();
    }
    if (!t["exact"].get<bool>()) ++not_exact;
    if (t["served"] == "rows") ++served_rows;
    const std::string src = t["source"].get<std::string>();
    sources[src] = sources.value(src, 0) + 1;
  }
  const double later = turns.size() > 1 ? double(turns.size() - 1) : 1.0;
  return {{"prompt_tokens", prompt},
          {"reread_tokens", reread},
          {"mean_reread_per_turn", turns.empty() ? 0.0 : double(reread) / double(turns.size())},
          {"reread_tokens_after_first", reread_after_first},
          {"mean_reread_after_first", double(reread_after_first) / later},
          {"wall_ms", wall},
          {"wall_ms_after_first", wall_after_first},
          {"first_token_ms", first_token},
          {"mean_first_token_ms_after_first", first_token_after_first / later},
          {"not_exact", not_exact},
          {"served_rows", served_rows},
          {"sources", sources}};
}

// Runs the session (and the probe) against a server with `spec`'s caches.
Json run_config(const BenchArgs& a, server::ServedModel& model, const ConfigSpec& spec,
                const SessionScript& s, std::vector<std::string>* answers) {
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.model_name = "anchorage-small";
  so.cache = spec.cache;
  bench::InProcessServer srv(so, model);
  if (core::Status b = srv.start(); !b.is_ok()) {
    std::fprintf(stderr, "session_bench: bind: %s\n", b.to_string().c_str());
    return {};
  }
  server::HttpClient& c = srv.client();

  const std::string key = "session-bench-" + spec.name;
  Json messages = Json::array({s.system, s.inputs[0]});
  Json turns = Json::array();
  Json held = Json::array();
  Json peak = held_bytes(c);
  answers->clear();
  for (size_t t = 0; t < s.inputs.size(); ++t) {
    if (t > 0) messages.push_back(s.inputs[t]);
    TurnResult r = post_turn(c, a, s, messages, key);
    if (!r.ok) break;
    Json row = {{"turn", int64_t(t + 1)}, {"input", s.kinds[t]}};
    row.update(r.row);
    r.row = std::move(row);
    std::fprintf(stderr, "session_bench: %s turn %zu: %s prompt %lld reread %lld (%s) %.0f ms\n",
                 spec.name.c_str(), t + 1, s.kinds[t].c_str(),
                 (long long)r.row["prompt_tokens"].get<int64_t>(),
                 (long long)r.row["reread"].get<int64_t>(),
                 r.row["source"].get<std::string>().c_str(), r.row["wall_ms"].get<double>());
    turns.push_back(r.row);
    answers->push_back(r.assistant.dump());
    messages.push_back(r.assistant);
    const Json h = held_bytes(c);
    held.push_back(h);
    for (const char* f : {"anchors", "anchor_bytes", "end_bytes", "store_bytes", "held_bytes"})
      peak[f] = std::max(peak[f].get<int64_t>(), h[f].get<int64_t>());
  }
  const Json after_session = held_bytes(c);
  // A new session with the same head: the body anchors below the shared prefix serve it.
  TurnResult probe = post_turn(c, a, s, Json::array({s.system, s.probe_user}), key + "-probe");
  const core::Status served = srv.stop();

  Json per_turn = Json::object();
  for (const char* f : {"prompt_tokens", "client_prompt_tokens", "cached_tokens", "reread",
                        "source", "served", "aligned", "first_token_ms", "wall_ms"}) {
    Json col = Json::array();
    for (const Json& t : turns) col.push_back(t[f]);
    per_turn[f] = col;
  }
  Json anchor_bytes = Json::array();
  for (const Json& h : held) anchor_bytes.push_back(h["anchor_bytes"]);
  per_turn["anchor_bytes"] = anchor_bytes;
  return {{"name", spec.name},
          {"caches", spec.cache.enabled},
          {"end_anchor", spec.cache.enabled && spec.cache.resident.end_anchor},
          {"anchor_spacing", spec.cache.resident.anchor_spacing},
          {"engine_anchor_spacing", spec.engine_spacing},
          {"store", spec.cache.enabled && spec.cache.store},
          {"turns_done", int64_t(turns.size())},
          {"totals", totals(turns)},
          {"bytes_after_session", after_session},
          {"peak_bytes", peak},
          {"probe_new_session", probe.ok ? probe.row : Json()},
          {"per_turn", per_turn},
          {"turns", turns},
          {"served", served.is_ok()}};
}

// An engine over the same weights with another anchor grid (the served one keeps its own).
std::unique_ptr<engine::Engine> engine_with_spacing(const engine::Engine& e, int64_t spacing) {
  engine::EngineOptions o = e.options();
  o.anchor_spacing = spacing;
  auto made = engine::Engine::create(e.architecture(), o);
  if (!made) {
    std::fprintf(stderr, "session_bench: engine: %s\n", made.error().to_string().c_str());
    return nullptr;
  }
  return std::move(made.value());
}

double ratio(const Json& a, const Json& b, const char* field) {
  const double den = b["totals"][field].get<double>();
  return den > 0 ? a["totals"][field].get<double>() / den : 0.0;
}

// Ratios between configurations of this run (absolute figures depend on the machine's load).
Json ratios(const Json& by_name) {
  Json r = Json::object();
  auto both = [&](const char* x, const char* y) {
    return by_name.contains(x) && by_name.contains(y) && by_name[x].contains("totals") &&
           by_name[y].contains("totals");
  };
  const std::pair<const char*, const char*> pairs[] = {
      {"end_off", "end_on"},   {"spacing_512", "end_on"},    {"spacing_256", "end_on"},
      {"default", "end_on"},   {"end_off_store", "default"}, {"no_cache", "end_on"},
      {"no_cache", "default"}, {"rows", "default"}};
  for (const auto& [x, y] : pairs) {
    if (!both(x, y)) continue;
    const Json& a = by_name[x];
    const Json& b = by_name[y];
    const double pb = b["peak_bytes"]["anchor_bytes"].get<double>();
    r[std::string(x) + "/" + y] = {
        {"reread_tokens", ratio(a, b, "reread_tokens")},
        {"reread_tokens_after_first", ratio(a, b, "reread_tokens_after_first")},
        {"wall_ms", ratio(a, b, "wall_ms")},
        {"wall_ms_after_first", ratio(a, b, "wall_ms_after_first")},
        {"first_token_ms", ratio(a, b, "first_token_ms")},
        {"peak_anchor_bytes", pb > 0 ? a["peak_bytes"]["anchor_bytes"].get<double>() / pb : 0.0}};
  }
  return r;
}

std::string loadavg() {  // the machine is shared: the figures name its load
  std::string line;
  std::getline(std::ifstream("/proc/loadavg") >> std::ws, line);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs a;
  std::vector<ConfigSpec> specs;
  bool args_ok = parse_args(argc, argv, &a);
  for (const std::string& n : a.configs) {
    ConfigSpec c;
    args_ok = args_ok && config_spec(n, &c);
    specs.push_back(std::move(c));
  }
  if (!args_ok) {
    std::fprintf(stderr,
                 "usage: session_bench [--preset small] [--turns 20] [--max-tokens 48] "
                 "[--threads 0] [--seed 1] [--user-every 7] [--capacity 32768] [--tool-choice "
                 "auto] [--reasoning-budget -1] [--configs end_on,end_off,spacing_512,"
                 "spacing_256,default,rows,end_off_store,no_cache]\n");
    return 2;
  }
  core::set_log_level(core::LogLevel::kWarn);
  std::unique_ptr<server::ServedModel> loaded =
      bench::load_preset_model("session_bench", a.preset, a.seed, a.capacity, a.threads,
                               std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json");
  if (loaded == nullptr) return 1;
  server::ServedModel& model = *loaded;
  const SessionScript script = make_script(a);
  const std::string load_start = loadavg();
  const int64_t t0 = core::now_ns();

  Json configs = Json::object();
  std::vector<std::vector<std::string>> answers(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ConfigSpec& spec = specs[i];
    // The served engine owns the weights; another grid borrows them for this configuration.
    std::unique_ptr<engine::Engine> other;
    if (spec.engine_spacing != model.engine->options().anchor_spacing) {
      other = engine_with_spacing(*model.engine, spec.engine_spacing);
      if (other == nullptr) return 1;
      std::swap(model.engine, other);
    }
    configs[spec.name] = run_config(a, model, spec, script, &answers[i]);
    if (other != nullptr) std::swap(model.engine, other);
  }
  Json groups = Json::array();
  Json divergent = Json::object();
  std::vector<bool> grouped(specs.size(), false);
  for (size_t i = 0; i < specs.size(); ++i) {
    size_t t = 0;
    while (t < answers[i].size() && t < answers[0].size() && answers[i][t] == answers[0][t]) ++t;
    divergent[specs[i].name] = t == answers[i].size() ? Json(nullptr) : Json(int64_t(t + 1));
    if (grouped[i]) continue;
    Json g = Json::array();
    for (size_t j = i; j < specs.size(); ++j) {
      if (!grouped[j] && answers[j] == answers[i]) {
        grouped[j] = true;
        g.push_back(specs[j].name);
      }
    }
    groups.push_back(g);
  }
  Json doc = {{"benchmark", "session"},
              {"preset", a.preset},
              {"threads", model.engine->n_threads()},
              {"turns", a.turns},
              {"max_tokens", a.max_tokens},
              {"user_every", a.user_every},
              {"capacity", a.capacity},
              {"state_section_bytes", model.engine->cost().section_bytes},
              {"kv_bytes_per_token", model.engine->cost().bytes_per_token},
              {"loadavg_start", load_start},
              {"loadavg_end", loadavg()},
              {"run_s", double(core::now_ns() - t0) * 1e-9},
              {"answer_groups", groups},
              {"first_divergent_turn", divergent},
              {"ratios", ratios(configs)},
              {"configs", configs}};
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

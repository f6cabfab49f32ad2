#include "replay/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "bench_support.h"
#include "core/clock.h"
#include "core/isa.h"
#include "core/log.h"
#include "replay/svg_plot.h"

namespace anchorage::bench {

const char kReplayUsage[] =
    "usage: anchorage bench replay [--scenarios opencode,two-sessions,openwebui,fleet,restart]\n"
    "         [--configs exact,rows,end_off,grid_only,no_cache[,continuation,prepared]] "
    "[--preset small] "
    "[--quick]\n"
    "         [--out DIR (build/replay)] [--threads 0] [--seed 1] [--max-tokens 48]\n"
    "         [--capacity 49152] [--tokenizer-dir DIR] [--log-level warn] [--check]\n"
    "Plays agent-shaped conversations against in-process servers, one per scenario and\n"
    "configuration; writes DIR/requests.jsonl and DIR/replay.svg, prints one JSON document.\n";

namespace {

std::vector<std::string> split_list(std::string_view v) {
  std::vector<std::string> out;
  while (!v.empty()) {
    const size_t c = v.find(',');
    if (c != 0) out.emplace_back(v.substr(0, c));
    v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
  }
  return out;
}

// FNV-1a of an answer: records name answers by hash, never by text.
std::string hash_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)h);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Configurations: the server's cache flags, one server each.

struct ConfigSpec {
  std::string name;
  server::CacheOptions cache;
  server::CompactionMode compaction = server::CompactionMode::kClient;
  bool prepares() const { return cache.prepare.enabled; }
};

bool config_spec(const std::string& name, ConfigSpec* out) {
  ConfigSpec c;
  c.name = name;
  if (name == "exact") {  // the defaults
  } else if (name == "rows") {
    c.cache.resume_policy = server::ResumePolicy::kRows;
  } else if (name == "end_off") {
    c.cache.resident.end_anchor = false;
  } else if (name == "grid_only") {  // the seed's design: body anchors on the 1,024 grid only
    c.cache.resident.end_anchor = false;
    c.cache.resident.branch_anchors = false;
    c.cache.resident.anchor_spacing = 1024;
  } else if (name == "continuation") {  // the defaults + compaction as a continuation
    c.compaction = server::CompactionMode::kContinuation;
  } else if (name == "prepared") {  // continuation + the summary written ahead while idle
    c.compaction = server::CompactionMode::kContinuation;
    c.cache.prepare.enabled = true;
    c.cache.prepare.idle_s = 1.0;    // the client waits for the summary before it compacts
    c.cache.prepare.min_tokens = 1;  // whatever the scenario's size
  } else if (name == "no_cache") {
    c.cache.enabled = false;
  } else {
    return false;
  }
  *out = std::move(c);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Scenario sizes: the full run must finish under 30 minutes on 2 cores for 5 configurations.

struct Scale {
  bool quick = false;
  int64_t system_words = 1500, big_tool_words = 700, small_tool_words = 160;
  int64_t oc_user_turns = 4, oc_steps = 8, oc_compact_after = 2;  // compaction after turn 3
  int64_t tool_lines_min = 30, tool_lines_span = 24;              // ~1k tokens per tool result
  int64_t two_rounds = 4;
  int64_t owui_turns = 10;
  int64_t fleet_sessions = 8;
  // The restart scenario's steps per user turn: what it shows (a conversation read back from
  // the spill, then going on) needs no 20k-token context, and under no_cache its prompts are
  // read whole every step.
  int64_t restart_steps = 4;
};

Scale make_scale(bool quick) {
  Scale s;
  if (!quick) return s;
  s.quick = true;
  s.system_words = 300;
  s.big_tool_words = 120;
  s.small_tool_words = 30;
  s.oc_user_turns = 2;
  s.oc_steps = 3;
  s.oc_compact_after = 0;
  s.tool_lines_min = 4;
  s.tool_lines_span = 6;
  s.two_rounds = 2;
  s.owui_turns = 3;
  s.fleet_sessions = 3;
  s.restart_steps = 3;
  return s;
}

// ---------------------------------------------------------------------------------------------
// The client side of one scenario under one configuration.

struct Request {
  std::string session;  // a name of the benchmark's own; its prompt_cache_key
  std::string kind;     // main, title, summary
  Json messages;
  const Json* tools = nullptr;  // null: none
  int64_t max_tokens = 0;
};

struct Sent {
  Json record;     // what requests.jsonl says (without new_tokens until the journal is read)
  Json assistant;  // the answer as returned
  std::string answer_key;
};

class Client {
 public:
  Client(server::HttpClient& http, const ReplayOptions& o, std::string scenario, std::string config,
         bool prepares = false)
      : http_(&http),
        o_(o),
        scenario_(std::move(scenario)),
        config_(std::move(config)),
        prepares_(prepares) {}

  // The server writes a compaction's summary ahead while idle (the `prepared` configuration).
  bool prepares() const { return prepares_; }
  // With a preparing server: the user reads the last answer until the summary of the
  // conversation in place is written (not a request: no record). Throws after 10 minutes.
  void wait_for_summary() {
    if (!prepares_) return;
    if (!wait_for_prepared_summary(*http_, 600))
      throw std::runtime_error("the summary was not written ahead");
  }

  // A planned stop of the server and a new one on the same cache directory (the `restart`
  // scenario); the runner provides it and hands back the new server's client.
  void set_restart(std::function<server::HttpClient&()> restart) { restart_ = std::move(restart); }
  void restart() {
    if (!restart_) throw std::runtime_error("this run cannot restart its server");
    http_ = &restart_();
  }

  // Sends one request; throws when it fails (the scenario cannot go on without the answer).
  Json send(const Request& r) {
    Json body = {{"model", "anchorage"},
                 {"messages", r.messages},
                 {"max_tokens", r.max_tokens},
                 {"temperature", 0},
                 {"prompt_cache_key", r.session}};
    if (r.tools != nullptr) {
      body["tools"] = *r.tools;
      body["tool_choice"] = "auto";  // what opencode sends
    }
    const PostResult p = post_json(*http_, "/v1/chat/completions", body);
    if (!p.ok) throw std::runtime_error("request failed (HTTP " + std::to_string(p.status) + ")");
    const Json& u = p.body["usage"];
    const Json& cache = u["anchorage"]["cache"];
    const int64_t turn = ++turns_[r.session];
    Sent s;
    s.assistant = assistant_message(p.body);
    s.answer_key = s.assistant.dump();
    s.record = {{"scenario", scenario_},
                {"config", config_},
                {"request", int64_t(sent_.size())},
                {"session", r.session},
                {"turn", turn},
                {"kind", r.kind},
                // What the engine was given (a continuation reports the client's prompt in
                // usage and the served one in the cache split).
                {"prompt_tokens", cache.value("served_prompt_tokens", u["prompt_tokens"])},
                {"client_prompt_tokens", cache.value("client_prompt_tokens", u["prompt_tokens"])},
                {"cached", cache["cached"]},
                {"reread", cache["reread"]},
                {"new_tokens", nullptr},
                {"reread_beyond_new", nullptr},
                {"tier", cache["tier"]},
                {"source", cache["source"]},
                {"exact", cache["exact"]},
                {"served", cache["served"]},
                {"completion_tokens", u["completion_tokens"]},
                {"ttft_ms", u["anchorage"]["timings"]["first_token_ms"]},
                {"wall_ms", p.wall_ms},
                {"answer_hash", hash_hex(s.answer_key)}};
    std::fprintf(stderr, "replay: %s/%s #%zu %s t%lld %s: prompt %lld reread %lld (%s) %.0f ms\n",
                 scenario_.c_str(), config_.c_str(), sent_.size(), r.session.c_str(),
                 (long long)turn, r.kind.c_str(), (long long)u["prompt_tokens"].get<int64_t>(),
                 (long long)cache["reread"].get<int64_t>(),
                 cache["source"].get<std::string>().c_str(), p.wall_ms);
    Json a = s.assistant;
    sent_.push_back(std::move(s));
    return a;
  }

  std::vector<Sent>& sent() { return sent_; }

 private:
  server::HttpClient* http_;
  std::function<server::HttpClient&()> restart_;
  const ReplayOptions& o_;
  std::string scenario_, config_;
  bool prepares_ = false;
  std::map<std::string, int64_t> turns_;
  std::vector<Sent> sent_;
};

// The fixed texts every scenario draws from (the same in every configuration).
struct World {
  Scale scale;
  int64_t max_tokens = 48;
  std::string system_head, system_tail;  // the agent prompt around its environment block
  Json tools;
  std::string title_system;
  CompactionText compaction;  // opencode's summarize route: its system text and instructions
  uint64_t seed = 1;

  // opencode's system prompt: its instructions, then an environment block naming the
  // working directory (where sessions in other folders part), then the rest.
  Json agent_system(const std::string& dir) const {
    return {{"role", "system"},
            {"content", system_head + "\n<env>\n  Working directory: /home/dev/" + dir +
                            "\n  Is directory a git repo: yes\n  Platform: linux\n</env>\n" +
                            system_tail}};
  }
};

World make_world(const ReplayOptions& o) {
  World w;
  w.scale = make_scale(o.quick);
  w.seed = o.seed;
  w.max_tokens = o.max_tokens > 0 ? o.max_tokens : (o.quick ? 12 : 48);
  Filler f(o.seed * 7919 + 23);
  AgentHead head =
      make_agent_head(f, w.scale.system_words, w.scale.big_tool_words, w.scale.small_tool_words);
  // The environment block sits ~1/5 into the prompt, like opencode's (~1.8k tokens in).
  const std::string& text = head.system_text;
  const size_t cut = std::min(text.find(' ', text.size() / 5), text.size());
  w.system_head = text.substr(0, cut);
  w.system_tail = text.substr(std::min(cut + 1, text.size()));
  w.tools = std::move(head.tools);
  w.title_system = f.words(w.scale.quick ? 60 : 300);
  w.compaction = opencode_compaction_text(f);
  return w;
}

// Messages the client adds: tool results, user messages (filler of the benchmark's own).
Json tool_result(Filler& f, const World& w, const Json& assistant) {
  const int64_t lines = w.scale.tool_lines_min + int64_t(f.next() % w.scale.tool_lines_span);
  Json m = {{"role", "tool"}, {"content", f.listing(lines) + f.words(40)}};
  // A client answers the call the model made; a random model may make none.
  if (assistant.contains("tool_calls") && assistant["tool_calls"].is_array() &&
      !assistant["tool_calls"].empty() && assistant["tool_calls"][0].contains("id"))
    m["tool_call_id"] = assistant["tool_calls"][0]["id"];
  return m;
}

Json user_message(Filler& f, int64_t words) {
  return {{"role", "user"}, {"content", f.words(words)}};
}

// opencode: user turns of agent steps (answer, tool result, answer, ...); before each later
// user turn a title request (its own system prompt, no tools) under the conversation's key;
// after turn oc_compact_after + 1 a manual compaction: a summary request, then the
// conversation restarts from system + tools + "what did we do" + the summary as the answer.
// A server that writes the summary ahead first sees an earlier session's compaction (which
// teaches it the client's system text, instructions and sampling), and the client compacts once
// that summary is written (the user read the last answer meanwhile).
void scenario_opencode(Client& c, const World& w) {
  Filler f(w.seed * 31 + 1);
  const std::string key = "opencode-1";
  const Json system = w.agent_system("proj0");
  if (c.prepares()) {
    Filler earlier(w.seed * 31 + 9);  // not f: the conversation is every configuration's same
    const Json short_history =
        Json::array({system,
                     user_message(earlier, 20),
                     {{"role", "assistant"}, {"content", earlier.words(30)}}});
    c.send({"opencode-0", "summary", opencode_compaction_messages(short_history, w.compaction),
            nullptr, w.max_tokens});
  }
  Json history = Json::array({system});
  for (int64_t u = 0; u < w.scale.oc_user_turns; ++u) {
    const Json user = user_message(f, 24 + int64_t(f.next() % 30));
    if (u > 0) {
      c.send(
          {key, "title",
           Json::array({{{"role", "system"}, {"content", w.title_system}},
                        {{"role", "user"}, {"content", "Generate a title for this conversation:"}},
                        user}),
           nullptr, std::min<int64_t>(w.max_tokens, 16)});
    }
    history.push_back(user);
    for (int64_t s = 0; s < w.scale.oc_steps; ++s) {
      const Json a = c.send({key, "main", history, &w.tools, w.max_tokens});
      history.push_back(a);
      if (s + 1 < w.scale.oc_steps) history.push_back(tool_result(f, w, a));
    }
    if (u == w.scale.oc_compact_after && u + 1 < w.scale.oc_user_turns) {
      // The summarize route sends the conversation as one rendered user message.
      c.wait_for_summary();
      const Json summary =
          c.send({key, "summary", opencode_compaction_messages(history, w.compaction), nullptr,
                  w.max_tokens});
      Json a = {{"role", "assistant"}, {"content", summary["content"]}};
      history = Json::array(
          {system, {{"role", "user"}, {"content", "What did we do so far?"}}, std::move(a)});
    }
  }
}

// Agent sessions A and B of the same project interleaved: A, B, A, B, ...
void scenario_two_sessions(Client& c, const World& w) {
  Filler f(w.seed * 31 + 2);
  const Json system = w.agent_system("proj0");
  Json h[2] = {Json::array({system, user_message(f, 30)}),
               Json::array({system, user_message(f, 30)})};
  const std::string keys[2] = {"session-a", "session-b"};
  for (int64_t r = 0; r < w.scale.two_rounds; ++r) {
    for (int s = 0; s < 2; ++s) {
      const Json a = c.send({keys[s], "main", h[s], &w.tools, w.max_tokens});
      h[s].push_back(a);
      h[s].push_back(r % 3 == 2 ? user_message(f, 30) : tool_result(f, w, a));
    }
  }
}

// Open WebUI: a chat without tools; the client sends earlier answers back without their
// reasoning_content, so the template renders them without the reasoning the server read.
void scenario_openwebui(Client& c, const World& w) {
  Filler f(w.seed * 31 + 3);
  Json history = Json::array({{{"role", "system"}, {"content", f.words(60)}}});
  for (int64_t t = 0; t < w.scale.owui_turns; ++t) {
    history.push_back(user_message(f, 40 + int64_t(f.next() % 60)));
    Json a = c.send({"openwebui-1", "main", history, nullptr, w.max_tokens});
    a.erase("reasoning_content");
    history.push_back(std::move(a));
  }
}

// A planned restart mid-conversation (a deploy): an opencode session's first user turn, SIGTERM
// (the drain saves the conversation to the session spill), a new server on the same cache
// directory, and the session goes on: its next step and a second user turn.
void scenario_restart(Client& c, const World& w) {
  Filler f(w.seed * 31 + 5);
  const std::string key = "restart-1";
  Json history = Json::array({w.agent_system("proj0"), user_message(f, 30)});
  for (int64_t half = 0; half < 2; ++half) {
    for (int64_t s = 0; s < w.scale.restart_steps; ++s) {
      const Json a = c.send({key, "main", history, &w.tools, w.max_tokens});
      history.push_back(a);
      history.push_back(tool_result(f, w, a));
      if (half == 0 && s + 1 == w.scale.restart_steps / 2) c.restart();
    }
    history.push_back(user_message(f, 30));
  }
}

// opencode in 8 folders: the same system text and tools, each session its own working
// directory line; one or two turns each.
void scenario_fleet(Client& c, const World& w) {
  Filler f(w.seed * 31 + 4);
  for (int64_t i = 0; i < w.scale.fleet_sessions; ++i) {
    const std::string key = "fleet-" + std::to_string(i);
    Json h = Json::array({w.agent_system("proj" + std::to_string(i + 1)), user_message(f, 30)});
    for (int64_t t = 0; t < 1 + i % 2; ++t) {
      const Json a = c.send({key, "main", h, &w.tools, w.max_tokens});
      h.push_back(a);
      h.push_back(tool_result(f, w, a));
    }
  }
}

using ScenarioFn = std::function<void(Client&, const World&)>;

bool scenario_fn(const std::string& name, ScenarioFn* out) {
  if (name == "opencode")
    *out = scenario_opencode;
  else if (name == "two-sessions")
    *out = scenario_two_sessions;
  else if (name == "openwebui")
    *out = scenario_openwebui;
  else if (name == "fleet")
    *out = scenario_fleet;
  else if (name == "restart")
    *out = scenario_restart;
  else
    return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Running and summing up.

// The journal's lines, one per request in order (the client sends one request at a time).
std::vector<Json> read_jsonl(const std::string& path) {
  std::vector<Json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(Json::parse(line, nullptr, false));
  return out;
}

struct RunResult {
  bool ok = false;
  std::vector<Sent> sent;
};

RunResult run_one(const ReplayOptions& o, server::ServedModel& model, const World& w,
                  const std::string& scenario, const ScenarioFn& fn, const ConfigSpec& spec) {
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.model_name = "anchorage";
  so.cache = spec.cache;
  so.compaction = spec.compaction;
  // The server's journal knows each request's new tokens (the client's tokens past where it
  // parts from the session's earlier prompt + answer): it gives the ideal.
  const std::string journal = o.out_dir + "/journal/" + scenario + "-" + spec.name + ".jsonl";
  std::filesystem::remove(journal);
  so.journal.path = journal;
  // The restart scenario keeps its conversation across servers in the session spill, in a
  // cache directory of its own (no other scenario touches the disk).
  if (scenario == "restart" && so.cache.enabled) {
    so.cache.disk_root = o.out_dir + "/disk/" + spec.name;
    std::filesystem::remove_all(so.cache.disk_root);
  }
  RunResult r;
  {
    auto srv = std::make_unique<InProcessServer>(so, model);
    if (core::Status s = srv->start(); !s.is_ok()) {
      std::fprintf(stderr, "replay: server: %s\n", s.to_string().c_str());
      return r;
    }
    bool stops_ok = true;
    Client c(srv->client(), o, scenario, spec.name, spec.prepares());
    c.set_restart([&]() -> server::HttpClient& {
      stops_ok = srv->stop().is_ok() && stops_ok;  // the drain runs here
      srv.reset();
      srv = std::make_unique<InProcessServer>(so, model);
      if (core::Status s = srv->start(); !s.is_ok())
        throw std::runtime_error("restart: " + s.to_string());
      return srv->client();
    });
    try {
      fn(c, w);
      r.ok = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "replay: %s/%s: %s\n", scenario.c_str(), spec.name.c_str(), e.what());
    }
    r.sent = std::move(c.sent());
    r.ok = srv->stop().is_ok() && stops_ok && r.ok;
  }
  const std::vector<Json> lines = read_jsonl(journal);
  if (lines.size() != r.sent.size()) {
    std::fprintf(stderr, "replay: %s/%s: journal has %zu lines for %zu requests\n",
                 scenario.c_str(), spec.name.c_str(), lines.size(), r.sent.size());
    r.ok = false;
    return r;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    Json& rec = r.sent[i].record;
    const int64_t fresh = lines[i].value("new_tokens", int64_t(-1));
    rec["new_tokens"] = fresh;
    rec["reread_beyond_new"] = std::max<int64_t>(0, rec["reread"].get<int64_t>() - fresh);
    rec["reason"] = lines[i].value("reason", std::string("none"));
  }
  return r;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double x = p * double(v.size() - 1);
  const size_t lo = size_t(std::floor(x)), hi = size_t(std::ceil(x));
  return v[lo] + (v[hi] - v[lo]) * (x - double(lo));
}

Json summarize(const std::vector<Sent>& sent) {
  int64_t prompt = 0, prefill = 0, fresh = 0, beyond = 0, follow = 0, follow_zero = 0,
          main_follow = 0, main_zero = 0, main_echo_late = 0, not_exact = 0, served_rows = 0;
  std::vector<double> ttft;
  for (const Sent& s : sent) {
    const Json& r = s.record;
    prompt += r["prompt_tokens"].get<int64_t>();
    prefill += r["reread"].get<int64_t>();
    fresh += r["new_tokens"].get<int64_t>();
    beyond += r["reread_beyond_new"].get<int64_t>();
    if (r["turn"].get<int64_t>() > 1) {
      ++follow;
      if (r["reread_beyond_new"].get<int64_t>() == 0) ++follow_zero;
      // The conversation's own turns (a session's first title or summary request shares only
      // the template's first tokens with its earlier prompts).
      if (r["kind"] == "main") {
        ++main_follow;
        if (r["reread_beyond_new"].get<int64_t>() == 0) ++main_zero;
        // It came before the engine was idle after the answer (a client with no think time).
        if (r["reason"] == "echo_not_taken") ++main_echo_late;
      }
    }
    if (!r["exact"].get<bool>()) ++not_exact;
    if (r["served"] == "rows") ++served_rows;
    ttft.push_back(r["ttft_ms"].get<double>());
  }
  return {{"requests", int64_t(sent.size())},
          {"prompt_tokens", prompt},
          {"prefill_tokens", prefill},
          {"new_tokens", fresh},
          {"reread_beyond_new", beyond},
          {"follow_ups", follow},
          {"follow_ups_zero_beyond_new", follow_zero},
          {"share_follow_ups_zero_beyond_new", follow > 0 ? double(follow_zero) / follow : 1.0},
          {"main_follow_ups", main_follow},
          {"main_follow_ups_zero_beyond_new", main_zero},
          {"main_follow_ups_echo_not_taken", main_echo_late},
          {"not_exact", not_exact},
          {"served_rows", served_rows},
          {"ttft_ms_median", percentile(ttft, 0.5)},
          {"ttft_ms_p95", percentile(ttft, 0.95)},
          {"ttft_ms_total", std::accumulate(ttft.begin(), ttft.end(), 0.0)}};
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

// The checks --check enforces, on requests.jsonl as written (so the file itself is checked).
Json run_checks(const std::string& jsonl, const Json& scenarios) {
  static const char* kFields[] = {
      "scenario", "config",  "request",    "session",           "turn", "kind",   "prompt_tokens",
      "cached",   "reread",  "new_tokens", "reread_beyond_new", "tier", "source", "exact",
      "served",   "ttft_ms", "answer_hash"};
  bool structure = true;
  // The `prepared` configuration's compaction of the scenario's conversation is answered from
  // the summary written ahead (its teaching compaction, of another session, is not).
  bool prepared = true;
  int64_t lines = 0;
  for (const Json& j : read_jsonl(jsonl)) {
    ++lines;
    if (!j.is_object()) {
      structure = false;
      continue;
    }
    if (j.value("config", "") == "prepared" && j.value("kind", "") == "summary" &&
        j.value("session", "") == "opencode-1")
      prepared = prepared && j.value("source", "") == "prepared";
    for (const char* f : kFields) structure = structure && j.contains(f) && !j[f].is_null();
    structure = structure && j["new_tokens"].get<int64_t>() >= 0 &&
                j["cached"].get<int64_t>() + j["reread"].get<int64_t>() ==
                    j["prompt_tokens"].get<int64_t>();
  }
  structure = structure && lines > 0;
  bool fewer = true, complete = true;
  for (const auto& [sc, by_config] : scenarios.items()) {
    for (const auto& [cfg, v] : by_config.items()) {
      complete = complete && v["completed"].get<bool>();
      if (cfg != "no_cache" && by_config.contains("no_cache"))
        fewer = fewer && v["prefill_tokens"].get<int64_t>() <
                             by_config["no_cache"]["prefill_tokens"].get<int64_t>();
    }
  }
  // Under the exact policy a cache may never change an answer.
  bool exact_equal = true;
  for (const auto& [sc, by_config] : scenarios.items())
    for (const auto& [cfg, v] : by_config.items())
      if (cfg != "no_cache" && v["policy"] == "exact" && v.contains("answers_equal_to_no_cache"))
        exact_equal = exact_equal && v["answers_equal_to_no_cache"].get<bool>();
  // Issue 12 §5: under the exact policy a conversation's follow-up reads only its new tokens,
  // unless it came before the engine was idle after the answer (its echo anchor not taken).
  bool only_new = true;
  for (const auto& [sc, by_config] : scenarios.items()) {
    if (!by_config.contains("exact")) continue;
    const Json& v = by_config["exact"];
    only_new = only_new && v["main_follow_ups"].get<int64_t>() ==
                               v["main_follow_ups_zero_beyond_new"].get<int64_t>() +
                                   v["main_follow_ups_echo_not_taken"].get<int64_t>();
  }
  return {{"records", lines},
          {"structure", structure},
          {"completed", complete},
          {"caches_forward_fewer_than_no_cache", fewer},
          {"exact_answers_equal_to_no_cache", exact_equal},
          {"exact_follow_ups_read_only_new", only_new},
          {"prepared_compaction_answered_ahead", prepared},
          {"passed", structure && complete && fewer && exact_equal && only_new && prepared}};
}

}  // namespace

bool parse_replay_args(const std::vector<std::string_view>& args, ReplayOptions* o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view f = args[i];
    if (f == "--quick") {
      o->quick = true;
      continue;
    }
    if (f == "--check") {
      o->check = true;
      continue;
    }
    if (i + 1 >= args.size()) return false;
    const std::string_view v = args[++i];
    int64_t n = 0;
    if (f == "--scenarios") {
      o->scenarios = split_list(v);
    } else if (f == "--configs") {
      o->configs = split_list(v);
    } else if (f == "--preset") {
      o->preset = std::string(v);
    } else if (f == "--out") {
      o->out_dir = std::string(v);
    } else if (f == "--log-level") {
      // The servers' log (ids, counts and hashes only): debug names why a resume fell short.
      const auto level = core::parse_log_level(v);
      if (!level) return false;
      o->log_level = *level;
    } else if (f == "--tokenizer-dir") {
      o->tokenizer_json = std::string(v) + "/tokenizer.json";
    } else if (parse_i64(v, &n) && n >= 0) {
      if (f == "--threads")
        o->threads = int(n);
      else if (f == "--seed")
        o->seed = uint64_t(n);
      else if (f == "--max-tokens")
        o->max_tokens = std::max<int64_t>(1, n);
      else if (f == "--capacity")
        o->capacity = std::max<int64_t>(1024, n);
      else
        return false;
    } else {
      return false;
    }
  }
  return !o->scenarios.empty() && !o->configs.empty();
}

int run_replay(const ReplayOptions& o) {
  std::vector<ConfigSpec> specs;
  for (const std::string& n : o.configs) {
    ConfigSpec c;
    if (!config_spec(n, &c)) {
      std::fprintf(stderr, "replay: unknown configuration %s\n%s", n.c_str(), kReplayUsage);
      return 2;
    }
    specs.push_back(std::move(c));
  }
  std::vector<ScenarioFn> fns;
  for (const std::string& n : o.scenarios) {
    ScenarioFn fn;
    if (!scenario_fn(n, &fn)) {
      std::fprintf(stderr, "replay: unknown scenario %s\n%s", n.c_str(), kReplayUsage);
      return 2;
    }
    fns.push_back(std::move(fn));
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir + "/journal", ec);
  if (ec) {
    std::fprintf(stderr, "replay: cannot create %s: %s\n", o.out_dir.c_str(), ec.message().c_str());
    return 1;
  }
  core::set_log_level(o.log_level);
  server::ModelSpec ms;
  ms.preset = o.preset;
  ms.seed = o.seed;
  ms.capacity = o.capacity > 0 ? o.capacity : (o.quick ? 16384 : 49152);
  ms.threads = o.threads;
  ms.tokenizer_json = o.tokenizer_json;
  auto loaded = server::load_served_model(ms);
  if (!loaded) {
    std::fprintf(stderr, "replay: %s\n", loaded.error().to_string().c_str());
    return 1;
  }
  server::ServedModel& model = loaded.value();
  const World world = make_world(o);
  const int64_t t0 = core::now_ns();

  const std::string jsonl = o.out_dir + "/requests.jsonl";
  std::ofstream out(jsonl, std::ios::trunc);
  Json scenarios = Json::object();
  // Per configuration: every answer equal to no_cache's (null without no_cache in the run).
  Json equal = Json::object();
  std::vector<PlotPanel> panels;
  bool all_ok = true;
  for (size_t si = 0; si < fns.size(); ++si) {
    const std::string& sc = o.scenarios[si];
    std::vector<RunResult> runs;
    for (const ConfigSpec& spec : specs) {
      runs.push_back(run_one(o, model, world, sc, fns[si], spec));
      all_ok = all_ok && runs.back().ok;
      for (const Sent& s : runs.back().sent) out << s.record.dump() << "\n";
      out.flush();
    }
    const auto nc = std::find(o.configs.begin(), o.configs.end(), "no_cache");
    const RunResult* base = nc == o.configs.end() ? nullptr : &runs[size_t(nc - o.configs.begin())];
    Json by_config = Json::object();
    PlotPanel panel;
    panel.title = sc;
    for (size_t ci = 0; ci < specs.size(); ++ci) {
      const RunResult& r = runs[ci];
      Json v = summarize(r.sent);
      v["completed"] = r.ok;
      // A continuation serves the compaction another prompt, so the answers after it are not
      // the no-cache server's: the exact-policy check does not apply to it.
      v["policy"] = specs[ci].compaction == server::CompactionMode::kContinuation
                        ? std::string("continuation")
                        : std::string(server::resume_policy_name(specs[ci].cache.resume_policy));
      if (base != nullptr) {
        const Json b = summarize(base->sent);
        v["prefill_ratio_to_no_cache"] =
            ratio(v["prefill_tokens"].get<double>(), b["prefill_tokens"].get<double>());
        v["ttft_median_ratio_to_no_cache"] =
            ratio(v["ttft_ms_median"].get<double>(), b["ttft_ms_median"].get<double>());
        v["ttft_total_ratio_to_no_cache"] =
            ratio(v["ttft_ms_total"].get<double>(), b["ttft_ms_total"].get<double>());
        // Caches must never change an answer: the same requests, the same answers.
        bool same = r.ok && base->ok && r.sent.size() == base->sent.size();
        int64_t first_diff = -1;
        for (size_t i = 0; i < std::min(r.sent.size(), base->sent.size()); ++i) {
          if (r.sent[i].answer_key != base->sent[i].answer_key) {
            same = false;
            first_diff = int64_t(i);
            break;
          }
        }
        v["answers_equal_to_no_cache"] = same;
        v["first_differing_request"] = first_diff < 0 ? Json(nullptr) : Json(first_diff);
        const std::string& name = specs[ci].name;
        equal[name] = (equal.contains(name) ? equal[name].get<bool>() : true) && same;
      }
      v["prefill_ratio_to_ideal"] =
          ratio(v["prefill_tokens"].get<double>(), v["new_tokens"].get<double>());
      by_config[specs[ci].name] = v;
      PlotSeries series;
      series.name = specs[ci].name;
      for (const Sent& s : r.sent) series.y.push_back(s.record["ttft_ms"].get<double>());
      panel.series.push_back(std::move(series));
    }
    scenarios[sc] = by_config;
    panels.push_back(std::move(panel));
  }
  out.close();
  const std::string svg = o.out_dir + "/replay.svg";
  const bool plotted =
      write_svg_plot(svg, "TTFT per request (ms, log scale), preset " + o.preset, panels);
  Json doc = {{"benchmark", "replay"},
              {"preset", o.preset},
              {"quick", o.quick},
              {"isa", std::string(core::isa_name(core::active_isa()))},
              {"threads", model.engine->n_threads()},
              {"max_tokens", world.max_tokens},
              {"capacity", ms.capacity},
              {"run_s", double(core::now_ns() - t0) * 1e-9},
              {"requests_jsonl", jsonl},
              {"plot_svg", plotted ? Json(svg) : Json(nullptr)},
              {"answers_equal_to_no_cache", equal},
              {"scenarios", scenarios}};
  const Json checks = run_checks(jsonl, scenarios);
  doc["checks"] = checks;
  std::printf("%s\n", doc.dump(2).c_str());
  if (!all_ok || !plotted) return 1;
  return o.check && !checks["passed"].get<bool>() ? 1 : 0;
}

}  // namespace anchorage::bench

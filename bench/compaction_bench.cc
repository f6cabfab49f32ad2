// compaction_bench: the time to first token of an opencode compaction (issue 16 §4;
// docs/compaction.md "Measured", docs/performance.md "Compaction"), three ways, at conversations
// of --sizes tokens. Prints ONE JSON document on stdout.
//
// The model is the `small` preset with random weights and the real Qwen3 tokenizer, served by an
// HttpServer in this process (bench_support.h). Per size, a conversation shaped like opencode's
// (the agent's system prompt and 10 tools, one user task, then assistant steps and tool results
// of the benchmark's own filler up to the size) is sent as one request under a session key
// (greedy, --max-tokens), then the session compacts with opencode's request shape (its system
// text, the history flattened into one user message, the instructions; bench_support.h
// opencode_compaction_messages, the benchmark's own text):
//   as_sent       a server with --compaction client: the compaction is a cold prompt of its own
//   continuation  a server with --compaction continuation --compaction-prepare on, the
//                 compaction sent right after the conversation's answer (before the engine was
//                 idle for --compaction-idle-s, 2 s here): the engine resumes at the end anchor
//                 and reads the turn
//   prepared      the same server: the conversation is sent again (it resumes in place and
//                 answers the same tokens), the client waits until the summary is written ahead
//                 (GET /v1/cache/stats) and compacts: answered from the summary, no engine work
// The continuation's compaction teaches the server the turn and sampling it prepares with (as
// opencode's earlier compaction would). TTFT is the server's usage.anchorage.timings
// first_token_ms; figures are compared as ratios within one run (the machine is shared).
//
// Flags: --preset small  --sizes 16384,32768  --max-tokens 16  --threads 0 (all)  --seed 1
//        --quick (tiny, one 2,048-token conversation)  --check (exit 1 unless each way was
//        served as named and the repeated conversation answered the same).
// Google Benchmark's --benchmark_* flags (scripts/bench.sh) are accepted and ignored.

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "core/clock.h"
#include "core/isa.h"
#include "core/log.h"
#include "engine/engine.h"
#include "server/served_model.h"
#include "server/server_options.h"
#include "text/qwen3_chat_template.h"
#include "text/tokenizer.h"

namespace {

using namespace anchorage;
using bench::Json;

struct Args {
  std::string preset = "small";
  std::vector<int64_t> sizes = {16384, 32768};
  int64_t max_tokens = 16;
  int64_t threads = 0;
  uint64_t seed = 1;
  bool quick = false;
  bool check = false;
};

bool parse_args(int argc, char** argv, Args* a) {
  bool sizes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;
    if (f == "--quick") {
      a->quick = true;
      continue;
    }
    if (f == "--check") {
      a->check = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (f == "--preset") {
      a->preset = std::string(v);
    } else if (f == "--sizes") {
      if (!bench::parse_i64_list(v, 256, &a->sizes)) return false;
      sizes_given = true;
    } else if (bench::parse_i64(v, &n) && n >= 0) {
      if (f == "--max-tokens")
        a->max_tokens = std::max<int64_t>(n, 1);
      else if (f == "--threads")
        a->threads = n;
      else if (f == "--seed")
        a->seed = uint64_t(n);
      else
        return false;
    } else {
      return false;
    }
  }
  if (a->quick) {
    a->preset = "tiny";
    if (!sizes_given) a->sizes = {2048};
  }
  return true;
}

int64_t prompt_tokens(const text::Tokenizer& tok, const Json& body) {
  auto rendered = text::render_qwen3_chat(body);
  return rendered ? int64_t(tok.encode(*rendered).size()) : 0;
}

// An opencode-shaped conversation of at least `size` tokens rendered (messages and tools).
struct Conversation {
  Json messages;
  Json tools;
  int64_t tokens = 0;
};

Conversation make_conversation(const Args& a, const text::Tokenizer& tok, int64_t size) {
  bench::Filler f(a.seed * 7919 + uint64_t(size));
  const bench::AgentHead head =
      a.quick ? bench::make_agent_head(f, 300, 120, 30) : bench::make_agent_head(f);
  Conversation c;
  c.tools = head.tools;
  c.messages = Json::array({{{"role", "system"}, {"content", head.system_text}},
                            {{"role", "user"}, {"content", f.words(30)}}});
  while (true) {
    c.tokens = prompt_tokens(tok, Json{{"messages", c.messages}, {"tools", c.tools}});
    if (c.tokens >= size) break;
    c.messages.push_back({{"role", "assistant"}, {"content", f.words(40)}});
    c.messages.push_back(
        {{"role", "tool"}, {"content", f.listing(a.quick ? 8 : 30) + f.words(40)}});
  }
  return c;
}

// One request's figures (counts and times; never text).
struct Sent {
  bool ok = false;
  Json record;
  Json assistant;
};

Sent send(server::HttpClient& http, const Json& messages, const Json* tools, const Args& a) {
  Json body = {{"model", "anchorage"},
               {"messages", messages},
               {"max_tokens", a.max_tokens},
               {"temperature", 0},
               {"prompt_cache_key", "compaction-bench"}};
  if (tools != nullptr) body["tools"] = *tools;
  const bench::PostResult p = bench::post_json(http, "/v1/chat/completions", body);
  Sent s;
  if (!p.ok) return s;
  const Json& u = p.body["usage"];
  const Json& cache = u["anchorage"]["cache"];
  s.ok = true;
  s.assistant = bench::assistant_message(p.body);
  s.record = {{"ttft_ms", u["anchorage"]["timings"]["first_token_ms"]},
              {"wall_ms", p.wall_ms},
              {"client_prompt_tokens", u["prompt_tokens"]},
              {"served_prompt_tokens", cache.value("served_prompt_tokens", u["prompt_tokens"])},
              {"cached", cache["cached"]},
              {"reread", cache["reread"]},
              {"source", cache["source"]},
              {"served", cache["served"]},
              {"exact", cache["exact"]}};
  return s;
}

double ratio(const Json& a, const Json& b) {
  const double y = b.get<double>();
  return y > 0 ? a.get<double>() / y : 0.0;
}

// One size: the two servers in turn. `passed` is false when a way was not served as named.
Json run_size(const Args& a, server::ServedModel& model, int64_t size, bool* passed) {
  const text::Tokenizer& tok = *model.tokenizer;
  const Conversation conv = make_conversation(a, tok, size);
  const bench::CompactionText text = [&] {
    bench::Filler f(a.seed * 31 + 7);
    return bench::opencode_compaction_text(f);
  }();
  Json out = {{"conversation_tokens", conv.tokens}};
  bool ok = true;

  // as_sent: --compaction client.
  {
    server::ServerOptions so;
    so.host = "127.0.0.1";
    so.port = 0;
    so.model_name = "anchorage";
    so.compaction = server::CompactionMode::kClient;
    bench::InProcessServer srv(so, model);
    if (!srv.start().is_ok()) return Json();
    const Sent first = send(srv.client(), conv.messages, &conv.tools, a);
    Json history = conv.messages;
    history.push_back(first.assistant);
    const Sent sent =
        first.ok
            ? send(srv.client(), bench::opencode_compaction_messages(history, text), nullptr, a)
            : Sent{};
    ok = ok && first.ok && sent.ok && sent.record["served"] == "client";
    out["conversation"] = first.record;
    out["as_sent"] = sent.record;
    ok = srv.stop().is_ok() && ok;
  }

  // continuation, then prepared: --compaction continuation --compaction-prepare on.
  {
    server::ServerOptions so;
    so.host = "127.0.0.1";
    so.port = 0;
    so.model_name = "anchorage";
    so.compaction = server::CompactionMode::kContinuation;
    so.cache.prepare.enabled = true;
    so.cache.prepare.idle_s = 2.0;
    so.cache.prepare.min_tokens = 1;
    bench::InProcessServer srv(so, model);
    if (!srv.start().is_ok()) return Json();
    const Sent first = send(srv.client(), conv.messages, &conv.tools, a);
    Json history = conv.messages;
    history.push_back(first.assistant);
    const Json compaction = bench::opencode_compaction_messages(history, text);
    const Sent cont = first.ok ? send(srv.client(), compaction, nullptr, a) : Sent{};
    // The conversation again: it resumes in place and answers as before (greedy, exact).
    const Sent again = cont.ok ? send(srv.client(), conv.messages, &conv.tools, a) : Sent{};
    const int64_t w0 = core::now_ns();
    const bool written = again.ok && bench::wait_for_prepared_summary(srv.client(), 1800);
    const double wait_ms = double(core::now_ns() - w0) * 1e-6;
    const Sent prepared = written ? send(srv.client(), compaction, nullptr, a) : Sent{};
    ok = ok && cont.ok && cont.record["source"] == "continuation" && again.ok &&
         again.assistant == first.assistant && prepared.ok &&
         prepared.record["source"] == "prepared";
    out["continuation"] = cont.record;
    out["conversation_again"] = again.record;
    out["summary_wait_ms"] = wait_ms;
    out["prepared"] = prepared.record;
    ok = srv.stop().is_ok() && ok;
  }
  if (ok) {
    out["ttft_ratio_as_sent_to_continuation"] =
        ratio(out["as_sent"]["ttft_ms"], out["continuation"]["ttft_ms"]);
    out["ttft_ratio_as_sent_to_prepared"] =
        ratio(out["as_sent"]["ttft_ms"], out["prepared"]["ttft_ms"]);
  }
  out["served_as_named"] = ok;
  *passed = *passed && ok;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: compaction_bench [--preset small] [--sizes 16384,32768] "
                 "[--max-tokens 16] [--threads 0] [--seed 1] [--quick] [--check]\n");
    return 2;
  }
  core::set_log_level(core::LogLevel::kWarn);
  // The largest conversation, its answer, the compaction's turn and summary.
  std::unique_ptr<server::ServedModel> loaded =
      bench::load_preset_model("compaction_bench", a.preset, a.seed,
                               *std::max_element(a.sizes.begin(), a.sizes.end()) + 8192, a.threads,
                               std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json");
  if (loaded == nullptr) return 1;
  server::ServedModel& model = *loaded;
  const int64_t t0 = core::now_ns();
  bool passed = true;
  Json sizes = Json::array();
  for (int64_t size : a.sizes) {
    std::fprintf(stderr, "compaction_bench: %lld tokens\n", (long long)size);
    sizes.push_back(run_size(a, model, size, &passed));
  }
  const Json doc = {{"benchmark", "compaction"},
                    {"preset", a.preset},
                    {"isa", std::string(core::isa_name(core::active_isa()))},
                    {"threads", model.engine->n_threads()},
                    {"max_tokens", a.max_tokens},
                    {"capacity", model.engine->capacity()},
                    {"run_s", double(core::now_ns() - t0) * 1e-9},
                    {"sizes", sizes},
                    {"passed", passed}};
  std::printf("%s\n", doc.dump(2).c_str());
  return a.check && !passed ? 1 : 0;
}

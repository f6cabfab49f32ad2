// bench_support: the pieces the HTTP benchmarks share (session_bench, `anchorage bench
// replay`): deterministic filler text, an agent's head (system prompt and 10 tools shaped like
// the opencode traces, /work/shared/traces/README.md), an HttpServer run in this process, a
// POST client, and the assistant message a client sends back from a response.
//
// The filler is the benchmarks' own synthetic text: nothing here reads or stores user data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "core/status.h"
#include "server/http_client.h"
#include "server/http_server.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace anchorage::bench {

using Json = nlohmann::ordered_json;

// Deterministic filler: words of an agent's world drawn by a seeded generator. Never user data.
class Filler {
 public:
  explicit Filler(uint64_t seed) : rng_(seed) {}
  std::string words(int64_t n);
  // Lines like `ls -la` or `grep -n` print: names, sizes, numbers.
  std::string listing(int64_t lines);
  uint64_t next() { return rng_.next_u64(); }

 private:
  core::Rng rng_;
};

// A tool in the OpenAI form, its parameters a JSON Schema with long descriptions (the traces'
// bash tool is 5,275 characters, task 3,856).
Json tool_json(Filler& f, const std::string& name, int64_t description_words, int n_params);

// An agent's fixed head: by default ~9.6k characters of system prompt and 10 tools of ~21k
// characters, as in the traces: ~8k tokens rendered. Smaller sizes make short contexts (tests).
struct AgentHead {
  std::string system_text;
  Json tools = Json::array();
};
AgentHead make_agent_head(Filler& f, int64_t system_words = 1500, int64_t big_tool_words = 700,
                          int64_t small_tool_words = 160);

// A benchmark flag's value: a whole number, or a comma-separated list of them each >= min.
bool parse_i64(std::string_view s, int64_t* out);
bool parse_i64_list(std::string_view s, int64_t min, std::vector<int64_t>* out);

// opencode's compaction (1.18.33, the traces' seq 7 and 13; docs/compaction.md), in its shape
// with the benchmark's own text: the summarization agent's system text (a few lines) and the
// instructions after the history (a lead sentence and a Markdown template of headings and
// bullets, ~1.2k characters as the traces'). Never the traces' text.
struct CompactionText {
  std::string system;
  std::string instructions;
};
CompactionText opencode_compaction_text(Filler& f);
// The compaction request's messages: the system text, then ONE user message holding the history
// (every message after its system text as a "[Role]: text" entry inside <conversation> tags) and
// the instructions, as opencode's summarize route flattens it.
Json opencode_compaction_messages(const Json& history, const CompactionText& text);

// Waits (polling GET /v1/cache/stats) until the server holds the summary written ahead of the
// conversation in place (`--compaction-prepare`: served.summary_end is the resident end
// anchor); false after timeout_s.
bool wait_for_prepared_summary(server::HttpClient& c, double timeout_s);

// An HttpServer on 127.0.0.1 and an ephemeral port, serving on its own thread until stop()
// (or destruction). `model` must outlive it.
class InProcessServer {
 public:
  InProcessServer(const server::ServerOptions& options, server::ServedModel& model);
  ~InProcessServer();
  InProcessServer(const InProcessServer&) = delete;
  InProcessServer& operator=(const InProcessServer&) = delete;
  core::Status start();
  // A keep-alive client with a long read timeout (a cold prefill of a long prompt is slow);
  // valid after start().
  server::HttpClient& client() { return *client_; }
  int port() const { return server_.port(); }
  // Shuts the server down; its serve() status.
  core::Status stop();

 private:
  server::HttpServer server_;
  std::unique_ptr<server::HttpClient> client_;
  std::thread thread_;
  core::Status served_;
  bool running_ = false;
};

// One POST of a JSON body. ok: HTTP 200 with a JSON body.
struct PostResult {
  bool ok = false;
  int status = 0;
  Json body;
  double wall_ms = 0;
};
PostResult post_json(server::HttpClient& c, const std::string& path, const Json& body);

// The model an HTTP benchmark serves, as `anchorage serve` loads it: `preset`'s random weights
// (seeded) and the real Qwen3 tokenizer at `tokenizer_json`. Null, with `bench: why` on stderr,
// when it does not load.
std::unique_ptr<server::ServedModel> load_preset_model(const char* bench, const std::string& preset,
                                                       uint64_t seed, int64_t capacity,
                                                       int64_t threads,
                                                       const std::string& tokenizer_json);

// The middle value (the upper one of an even count); 0 for none.
double median(std::vector<double> v);

// /proc/loadavg's line: the figures were taken on a shared machine, so each document says how
// loaded it was.
std::string loadavg();

// The assistant message as the client got it: exactly the fields the server returned
// (content, maybe null; reasoning_content; tool_calls).
Json assistant_message(const Json& response);

}  // namespace anchorage::bench

#include "bench_support.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "core/clock.h"

namespace anchorage::bench {

std::string Filler::words(int64_t n) {
  static constexpr std::string_view kWords[] = {
      "the",       "file",    "function", "returns",  "value",  "when",   "request",    "cache",
      "state",     "token",   "model",    "server",   "client", "error",  "test",       "build",
      "directory", "path",    "command",  "output",   "input",  "must",   "should",     "never",
      "always",    "before",  "after",    "each",     "line",   "change", "commit",     "branch",
      "review",    "format",  "string",   "number",   "list",   "read",   "write",      "edit",
      "search",    "pattern", "result",   "user",     "task",   "step",   "tool",       "call",
      "answer",    "project", "module",   "import",   "export", "config", "option",     "default",
      "version",   "package", "install",  "run",      "check",  "verify", "explain",    "concise",
      "precise",   "example", "section",  "document", "header", "source", "memory",     "thread",
      "process",   "signal",  "timeout",  "retry",    "limit",  "bytes",  "characters", "absolute",
      "relative",  "working", "current",  "parallel"};
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += (rng_.next_u64() % 13 == 0) ? ". " : " ";
    out += kWords[rng_.next_u64() % std::size(kWords)];
  }
  return out + ".";
}

std::string Filler::listing(int64_t lines) {
  std::string out;
  for (int64_t i = 0; i < lines; ++i) {
    const uint64_t r = rng_.next_u64();
    char buf[160];
    if (r % 3 == 0) {
      std::snprintf(buf, sizeof(buf),
                    "-rw-r--r-- 1 dev dev %6llu Dec  3 %02llu:%02llu %s_%llu.%s\n",
                    (unsigned long long)(r % 90000 + 100), (unsigned long long)(r % 24),
                    (unsigned long long)(r / 7 % 60), r % 2 ? "src/cache/tier" : "tests/unit",
                    (unsigned long long)(r / 11 % 97), r % 5 ? "cc" : "h");
    } else {
      std::snprintf(buf, sizeof(buf), "src/module_%llu.cc:%llu:  %s\n",
                    (unsigned long long)(r % 41), (unsigned long long)(r / 13 % 900 + 1),
                    words(4 + int64_t(r % 9)).c_str());
    }
    out += buf;
  }
  return out;
}

Json tool_json(Filler& f, const std::string& name, int64_t description_words, int n_params) {
  Json props = Json::object();
  Json required = Json::array();
  for (int p = 0; p < n_params; ++p) {
    const std::string pname = name + "_arg" + std::to_string(p);
    props[pname] = {{"type", p % 3 == 2 ? "number" : "string"},
                    {"description", f.words(20 + int64_t(f.next() % 40))}};
    if (p < 2) required.push_back(pname);
  }
  Json params = {{"$schema", "http://json-schema.org/draft-07/schema#"},
                 {"type", "object"},
                 {"properties", props},
                 {"required", required},
                 {"additionalProperties", false}};
  return {{"type", "function"},
          {"function",
           {{"name", name}, {"description", f.words(description_words)}, {"parameters", params}}}};
}

AgentHead make_agent_head(Filler& f, int64_t system_words, int64_t big_tool_words,
                          int64_t small_tool_words) {
  AgentHead h;
  h.system_text = f.words(system_words);
  const char* names[] = {"bash",  "edit", "glob",      "grep",     "read",
                         "skill", "task", "todowrite", "webfetch", "write"};
  for (int i = 0; i < 10; ++i) {
    const bool big = i == 0 || i == 6;  // bash and task carry most of the text
    h.tools.push_back(tool_json(f, names[i], big ? big_tool_words : small_tool_words, 3 + i % 3));
  }
  return h;
}

InProcessServer::InProcessServer(const server::ServerOptions& options, server::ServedModel& model)
    : server_(options, model) {}

InProcessServer::~InProcessServer() {
  static_cast<void>(stop());
}

core::Status InProcessServer::start() {
  if (core::Status b = server_.bind(); !b.is_ok()) return b;
  thread_ = std::thread([this] { served_ = server_.serve(); });
  running_ = true;
  client_ = std::make_unique<server::HttpClient>("127.0.0.1", server_.port());
  client_->set_read_timeout(3600);
  return core::Status();
}

core::Status InProcessServer::stop() {
  if (!running_) return served_;
  running_ = false;
  client_.reset();
  server_.shutdown();
  thread_.join();
  return served_;
}

PostResult post_json(server::HttpClient& c, const std::string& path, const Json& body) {
  PostResult out;
  const int64_t t0 = core::now_ns();
  auto r = c.Post(path, body.dump(), "application/json");
  out.wall_ms = double(core::now_ns() - t0) * 1e-6;
  if (!r) {
    std::fprintf(stderr, "bench: POST %s: %s\n", path.c_str(), r.error().c_str());
    return out;
  }
  out.status = r->status;
  out.body = Json::parse(r->body, nullptr, false);
  // The error's first bytes only: a server's error messages hold no prompt text.
  if (r->status != 200) {
    std::fprintf(stderr, "bench: HTTP %d: %s\n", r->status, r->body.substr(0, 300).c_str());
    return out;
  }
  out.ok = out.body.is_object();
  return out;
}

Json assistant_message(const Json& response) {
  const Json& m = response["choices"][0]["message"];
  Json a = {{"role", "assistant"}, {"content", m["content"]}};
  if (m.contains("reasoning_content")) a["reasoning_content"] = m["reasoning_content"];
  if (m.contains("tool_calls")) a["tool_calls"] = m["tool_calls"];
  return a;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string loadavg() {
  std::string line;
  std::getline(std::ifstream("/proc/loadavg") >> std::ws, line);
  return line;
}

}  // namespace anchorage::bench

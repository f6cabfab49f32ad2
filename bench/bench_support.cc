#include "bench_support.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>
#include <thread>

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

bool parse_i64(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_i64_list(std::string_view s, int64_t min, std::vector<int64_t>* out) {
  out->clear();
  while (!s.empty()) {
    const size_t c = s.find(',');
    int64_t n = 0;
    if (!parse_i64(s.substr(0, c), &n) || n < min) return false;
    out->push_back(n);
    s = c == std::string_view::npos ? std::string_view() : s.substr(c + 1);
  }
  return !out->empty();
}

CompactionText opencode_compaction_text(Filler& f) {
  CompactionText t;
  for (int i = 0; i < 5; ++i) t.system += f.words(18 + int64_t(f.next() % 10)) + "\n";
  t.instructions = f.words(28) + "\n\n---\n";
  for (int h = 0; h < 8; ++h) {
    t.instructions += "## " + f.words(2) + "\n";
    for (int b = 0; b < 2; ++b) t.instructions += "- " + f.words(6 + int64_t(f.next() % 6)) + "\n";
  }
  t.instructions += "---\n\n" + f.words(20);
  return t;
}

Json opencode_compaction_messages(const Json& history, const CompactionText& text) {
  std::string out = "Here is the conversation so far:\n\n<conversation>\n";
  auto field = [](const Json& m, const char* key) {
    return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
  };
  for (size_t i = 1; i < history.size(); ++i) {
    const Json& m = history[i];
    const std::string role = field(m, "role");
    if (role == "user") {
      out += "[User]: " + field(m, "content") + "\n\n";
    } else if (role == "assistant") {
      if (const std::string r = field(m, "reasoning_content"); !r.empty())
        out += "[Assistant reasoning]: " + r + "\n";
      out += "[Assistant]: " + field(m, "content") + "\n";
      if (m.contains("tool_calls") && m["tool_calls"].is_array())
        for (const Json& call : m["tool_calls"])
          if (call.contains("function"))
            out += "[Assistant tool call]: " + call["function"].value("name", "") + "(" +
                   call["function"].value("arguments", "") + ")\n";
    } else if (role == "tool") {
      out += "[Tool result]: " + field(m, "content") + "\n\n";
    }
  }
  out += "</conversation>\n\n" + text.instructions;
  return Json::array(
      {{{"role", "system"}, {"content", text.system}}, {{"role", "user"}, {"content", out}}});
}

bool wait_for_prepared_summary(server::HttpClient& c, double timeout_s) {
  const int64_t deadline = core::now_ns() + int64_t(timeout_s * 1e9);
  while (core::now_ns() < deadline) {
    auto r = c.Get("/v1/cache/stats");
    if (r && r->status == 200) {
      const Json s = Json::parse(r->body, nullptr, false);
      if (s.is_object() && s.contains("served") && s.contains("resident")) {
        const int64_t end = s["served"].value("summary_end", int64_t(0));
        if (end > 0 && end == s["resident"].value("end_position", int64_t(-1))) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
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

std::unique_ptr<server::ServedModel> load_preset_model(const char* bench, const std::string& preset,
                                                       uint64_t seed, int64_t capacity,
                                                       int64_t threads,
                                                       const std::string& tokenizer_json) {
  server::ModelSpec ms;
  ms.preset = preset;
  ms.seed = seed;
  ms.capacity = capacity;
  ms.threads = int(threads);
  ms.tokenizer_json = tokenizer_json;
  auto loaded = server::load_served_model(ms);
  if (!loaded) {
    std::fprintf(stderr, "%s: %s\n", bench, loaded.error().to_string().c_str());
    return nullptr;
  }
  return std::make_unique<server::ServedModel>(std::move(loaded.value()));
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

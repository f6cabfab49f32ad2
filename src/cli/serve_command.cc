#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "cli/flags.h"
#include "cli/model_source.h"
#include "core/dtype.h"
#include "core/log.h"
#include "server/http_server.h"
#include "server/served_model.h"
#include "server/server_options.h"

#ifndef ANCHORAGE_DEFAULT_TOKENIZER_DIR
#define ANCHORAGE_DEFAULT_TOKENIZER_DIR "data/qwen3"
#endif

namespace anchorage::cli {
namespace {

struct ServeArgs {
  std::string host = "127.0.0.1";
  int64_t port = 8080;
  ModelArgs model;
  int64_t ctx = 32768;
  int64_t threads = 0;
  int64_t queue = 8;
  int64_t max_body_bytes = int64_t(16) << 20;
  int64_t max_tokens = 4096;
  int64_t http_threads = 0;
  std::string tokenizer_dir = ANCHORAGE_DEFAULT_TOKENIZER_DIR;
  std::string model_name;
};

FlagSet make_flags(ServeArgs* a) {
  FlagSet f;
  f.add_string("host", &a->host, "address to listen on");
  f.add_int("port", &a->port, "TCP port (0 = any free port)");
  add_model_flags(&f, &a->model, /*chat_template=*/true);
  f.add_int("ctx", &a->ctx, "context capacity in tokens (prompt + generation)");
  f.add_int("threads", &a->threads, "engine threads, counting the engine thread (0 = all)");
  f.add_int("queue", &a->queue, "requests that may wait for the engine before a 429");
  f.add_int("max-body-bytes", &a->max_body_bytes, "largest request body (413 above)");
  f.add_int("max-tokens", &a->max_tokens, "max_tokens of a request that names none");
  f.add_int("http-threads", &a->http_threads, "HTTP worker threads (0 = queue + 8)");
  f.add_string("tokenizer-dir", &a->tokenizer_dir, "directory holding the tokenizer.json");
  f.add_string("model-name", &a->model_name, "model id served (none: anchorage-<preset>)");
  return f;
}

constexpr const char* kFlagNames[] = {
    "host",       "port",          "model",         "preset",    "seed",  "weight-dtype",
    "kv-dtype",   "chat-template", "ctx",           "threads",   "queue", "max-body-bytes",
    "max-tokens", "http-threads",  "tokenizer-dir", "model-name"};

// ANCHORAGE_<FLAG> values as `--flag=value` arguments, placed before the command line's.
std::vector<std::string> env_args() {
  std::vector<std::string> out;
  for (const char* name : kFlagNames) {
    std::string var = "ANCHORAGE_";
    for (const char* c = name; *c != '\0'; ++c) var += *c == '-' ? '_' : char(std::toupper(*c));
    if (const char* value = std::getenv(var.c_str()))
      out.push_back("--" + std::string(name) + "=" + value);
  }
  return out;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "anchorage serve: %s (see anchorage serve --help)\n", msg.c_str());
  return 2;
}

void print_help(const FlagSet& flags) {
  std::printf(
      "usage: anchorage serve [flags]\n"
      "Serves the OpenAI API (/v1/chat/completions, /v1/completions, /v1/models, /health,\n"
      "/metrics) on a qwen35 model: a GGUF file (--model) or random weights from a preset.\n"
      "docs/http-api.md describes it.\n\n"
      "Every flag can also be set by the environment: ANCHORAGE_ + its name in upper case\n"
      "with '_' for '-' (ANCHORAGE_PORT=9000); the command line wins.\n\nflags:\n");
  flags.print_help(stdout);
}

// The default model id: the preset, or the file's name without directory and .gguf.
std::string model_label(const ModelArgs& m) {
  if (m.model.empty()) return m.preset;
  std::string name = m.model.substr(m.model.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0)
    name.resize(name.size() - 5);
  return name;
}

// Checks the flags and fills the model spec and server options; returns the usage error.
std::string check_args(const ServeArgs& a, server::ModelSpec* spec, server::ServerOptions* o) {
  if (std::string e = check_model_args(a.model, &spec->weight_dtype, &spec->kv_dtype); !e.empty())
    return e;
  if (a.port < 0 || a.port > 65535) return "--port must be in [0, 65535]";
  if (a.ctx < 1) return "--ctx must be >= 1";
  if (a.threads < 0 || a.threads > 1024) return "--threads must be in [0, 1024]";
  if (a.queue < 1 || a.queue > 4096) return "--queue must be in [1, 4096]";
  if (a.max_body_bytes < 1) return "--max-body-bytes must be >= 1";
  if (a.max_tokens < 0) return "--max-tokens must be >= 0";
  if (a.http_threads < 0 || a.http_threads > 4096) return "--http-threads must be in [0, 4096]";
  fill_model_spec(a.model, spec);
  spec->capacity = a.ctx;
  spec->threads = int(a.threads);
  spec->tokenizer_json = a.tokenizer_dir + "/tokenizer.json";
  o->host = a.host;
  o->port = int(a.port);
  o->model_name = a.model_name.empty() ? "anchorage-" + model_label(a.model) : a.model_name;
  o->queue_capacity = size_t(a.queue);
  o->max_body_bytes = size_t(a.max_body_bytes);
  o->default_max_tokens = a.max_tokens;
  o->http_threads = int(a.http_threads);
  return {};
}

// Waits for SIGTERM/SIGINT and shuts the server down; SIGUSR1 (from main) ends the wait
// when the server stopped on its own. A second SIGTERM/SIGINT exits at once.
void wait_for_signals(const sigset_t& set, server::HttpServer* server) {
  int sig = 0;
  if (sigwait(&set, &sig) != 0 || sig == SIGUSR1) return;
  core::log(core::LogLevel::kInfo, "signal %d: shutting down (finishing the running request)", sig);
  std::thread stopper([server] { server->shutdown(); });
  while (sigwait(&set, &sig) == 0 && sig != SIGUSR1) {
    core::log(core::LogLevel::kWarn, "second signal %d: exiting now", sig);
    std::_Exit(1);
  }
  stopper.join();
}

}  // namespace

int serve_command(const std::vector<std::string_view>& args) {
  // Signals go to one waiting thread: blocked here, before any thread exists, so every
  // thread (engine pool, HTTP workers) inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  ServeArgs a;
  FlagSet flags = make_flags(&a);
  const std::vector<std::string> env = env_args();
  std::vector<std::string_view> all(env.begin(), env.end());
  all.insert(all.end(), args.begin(), args.end());
  bool help = false;
  if (core::Status s = flags.parse(all, &help); !s.is_ok()) return usage_error(s.message());
  if (help) {
    print_help(flags);
    return 0;
  }
  server::ModelSpec spec;
  server::ServerOptions options;
  if (std::string e = check_args(a, &spec, &options); !e.empty()) return usage_error(e);

  auto model = server::load_served_model(spec);
  if (!model) {
    std::fprintf(stderr, "anchorage serve: %s\n", model.error().to_string().c_str());
    return 1;
  }
  server::HttpServer server(options, model.value());
  if (core::Status s = server.bind(); !s.is_ok()) {
    std::fprintf(stderr, "anchorage serve: %s\n", s.to_string().c_str());
    return 1;
  }
  core::log(core::LogLevel::kInfo,
            "serving %s (%s, vocab %lld, ctx %lld, %d threads, loaded in %.2f s) on "
            "http://%s:%d",
            options.model_name.c_str(),
            (spec.gguf_path.empty() ? "preset " + spec.preset : spec.gguf_path).c_str(),
            (long long)model->vocab_size, (long long)spec.capacity, model->engine->n_threads(),
            double(model->load_ns) * 1e-9, options.host.c_str(), server.port());
  std::thread signals([&] { wait_for_signals(set, &server); });
  const core::Status served = server.serve();
  pthread_kill(signals.native_handle(), SIGUSR1);
  signals.join();
  server.shutdown();
  if (!served.is_ok()) {
    std::fprintf(stderr, "anchorage serve: %s\n", served.to_string().c_str());
    return 1;
  }
  core::log(core::LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace anchorage::cli

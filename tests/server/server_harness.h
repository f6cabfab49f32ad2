// ServerHarness: an anchorage HTTP server in the test process, on 127.0.0.1 and an ephemeral
// port, over the `tiny` preset with its vocabulary padded to the real Qwen3 tokenizer. The
// model and tokenizer are loaded once per test binary (the tokenizer takes seconds); each
// harness makes its own HttpServer over them, so tests never share queue or metrics. Also: a
// raw-socket HTTP client (for malformed requests and for hanging up mid-stream) and an SSE
// splitter.
//
// Threading: the harness serves on its own thread; tests talk to it through sockets only.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "server/http_client.h"
#include "server/http_server.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace anchorage::server::testing {

using Json = nlohmann::ordered_json;

// Big enough for every opencode trace body (the largest renders to ~7,700 tokens).
inline constexpr int64_t kTestCapacity = 12288;

inline std::string tokenizer_json_path() {
  return std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json";
}

inline std::string source_path(const std::string& rel) {
  return std::string(ANCHORAGE_SOURCE_DIR) + "/" + rel;
}

// The tiny model and tokenizer, loaded once; nullptr (and a test failure) when missing.
inline ServedModel* shared_model() {
  static std::unique_ptr<ServedModel> model = [] {
    core::set_log_level(core::LogLevel::kWarn);
    ModelSpec spec;
    spec.preset = "tiny";
    spec.seed = 7;
    spec.capacity = kTestCapacity;
    spec.threads = 2;
    spec.tokenizer_json = tokenizer_json_path();
    auto loaded = load_served_model(spec);
    if (!loaded) {
      ADD_FAILURE() << loaded.error().to_string()
                    << " (run scripts/deps.sh, which fetches the tokenizer, then configure again)";
      return std::unique_ptr<ServedModel>();
    }
    return std::make_unique<ServedModel>(std::move(loaded.value()));
  }();
  return model.get();
}

// The shared model's tokenizer and weights with an engine of this server's own: servers run
// side by side in one test, and a server's engine thread works after its answers too (an echo
// anchor, a summary written ahead), so no two servers may share an engine.
inline std::unique_ptr<ServedModel> own_engine(const ServedModel* shared) {
  if (shared == nullptr) return nullptr;
  auto engine = engine::Engine::create(shared->engine->architecture(), shared->engine->options());
  if (!engine) {
    ADD_FAILURE() << engine.error().to_string();
    return nullptr;
  }
  auto m = std::make_unique<ServedModel>();
  m->tokenizer = shared->tokenizer;
  m->engine = std::move(engine.value());
  m->stop_ids = shared->stop_ids;
  m->vocab_size = shared->vocab_size;
  m->load_ns = shared->load_ns;
  m->weights = shared->weights;
  return m;
}

class ServerHarness {
 public:
  // stop_ids, when given, replace the model's end-of-sequence ids (a test that needs the model
  // to end its answer with a token it is known to pick).
  explicit ServerHarness(ServerOptions options = {},
                         const std::vector<int32_t>* stop_ids = nullptr) {
    options.host = "127.0.0.1";
    options.port = 0;
    options.model_name = "anchorage-tiny";
    options.sse_ping_ms = 50;  // finds a client that left quickly
    model_ = own_engine(shared_model());
    if (model_ == nullptr) return;
    if (stop_ids != nullptr) model_->stop_ids = *stop_ids;
    server_ = std::make_unique<HttpServer>(options, *model_);
    const core::Status bound = server_->bind();
    EXPECT_TRUE(bound.is_ok()) << bound.to_string();
    thread_ = std::thread([this] { served_ = server_->serve(); });
  }
  ~ServerHarness() { stop(); }

  bool ok() const { return server_ != nullptr; }
  HttpServer& server() { return *server_; }
  const ServedModel& model() const { return *model_; }
  int port() const { return server_->port(); }

  // Shuts down and waits for serve() to return (idempotent).
  void stop() {
    if (!server_) return;
    server_->shutdown();
    if (thread_.joinable()) thread_.join();
    EXPECT_TRUE(served_.is_ok()) << served_.to_string();
  }

  HttpClient client() const {
    HttpClient c("127.0.0.1", port());
    c.set_read_timeout(120);
    return c;
  }

  // POSTs a JSON body; the response (false when the request failed).
  HttpResult post(const std::string& path, const std::string& body,
                  const HttpHeaders& headers = {}) const {
    return client().Post(path, headers, body, "application/json");
  }

  // POSTs and collects the raw response body as it comes (for SSE). keep_going may return
  // false to hang up; status 0 then.
  struct Streamed {
    int status = 0;
    HttpHeaders headers;
    std::string body;
    // The header's value ("" when absent); names compare without case.
    std::string header(std::string_view name) const {
      for (const auto& [k, v] : headers)
        if (iequals(k, name)) return v;
      return {};
    }
  };
  Streamed post_streamed(const std::string& path, const std::string& body,
                         const std::function<bool(const std::string& so_far)>& keep_going = nullptr,
                         HttpHeaders headers = {}) const {
    Streamed out;
    headers.emplace_back("Content-Type", "application/json");
    const HttpResult r = client().send("POST", path, headers, body, [&](std::string_view piece) {
      out.body.append(piece);
      return !keep_going || keep_going(out.body);
    });
    if (r) {
      out.status = r->status;
      out.headers = r->headers;
    }
    return out;
  }

  // Sends raw bytes on a new connection and reads one response with a Content-Length (or
  // until the server closes the connection).
  std::string raw_exchange(const std::string& bytes) const {
    const int fd = connect_socket();
    if (fd < 0) return {};
    send_all(fd, bytes);
    std::string out;
    char buf[4096];
    while (true) {
      const size_t head_end = out.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t cl = out.find("Content-Length: ");
        if (cl != std::string::npos && cl < head_end) {
          const size_t length = std::stoul(out.substr(cl + 16));
          if (out.size() >= head_end + 4 + length) break;
        }
      }
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, size_t(n));
    }
    ::close(fd);
    return out;
  }

  int connect_socket() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      ADD_FAILURE() << "connect failed";
      return -1;
    }
    return fd;
  }

  static void send_all(int fd, const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += size_t(n);
    }
  }

 private:
  std::unique_ptr<ServedModel> model_;  // declared first: the server goes before it
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  core::Status served_;
};

// A raw HTTP/1.1 POST with a JSON body.
inline std::string raw_post(const std::string& path, const std::string& body,
                            const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         "Connection: close\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Splits an SSE body into its events' data payloads, checking the framing: every event is
// exactly one "data: " line followed by a blank line; comment lines (": ping") are skipped.
inline std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated SSE event at byte " << pos;
    if (end == std::string::npos) break;
    const std::string event = body.substr(pos, end - pos);
    pos = end + 2;
    if (event.rfind(":", 0) == 0) continue;  // a comment
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << "event without data: prefix";
    EXPECT_EQ(event.find('\n'), std::string::npos) << "multi-line event";
    out.push_back(event.substr(6));
  }
  return out;
}

inline Json parse_json(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << text.substr(0, 200);
  return j;
}

// A chat body with one user message.
inline Json chat_body(const std::string& user_text, int64_t max_tokens) {
  Json b = Json::object();
  b["model"] = "anchorage-tiny";
  b["messages"] = Json::array({Json{{"role", "user"}, {"content", user_text}}});
  b["max_tokens"] = max_tokens;
  b["temperature"] = 0;
  return b;
}

}  // namespace anchorage::server::testing

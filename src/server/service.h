// Service: what every route handler reads — the options, the tokenizer, the engine queue, the
// metrics, the model's limits — and the count of responses still being written (a SIGTERM
// waits for it to reach zero). Built once by HttpServer; handlers get it by reference.
//
// Thread safety: the references point at thread-safe objects (Tokenizer's const methods,
// EngineQueue, Metrics); the counters are atomic or under mu_.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "server/engine_queue.h"
#include "server/metrics.h"
#include "server/output_constraint.h"
#include "server/server_options.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

// Responses that were submitted and are not yet fully written.
class ResponseTracker {
 public:
  void begin();
  void end();
  // Blocks until none is left.
  void wait_idle();
  size_t active() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t active_ = 0;
};

struct Service {
  Service(const ServerOptions& o, const text::Tokenizer& t, EngineQueue& q, Metrics& m,
          ResponseTracker& r)
      : options(o), tokenizer(t), queue(q), metrics(m), responses(r) {}

  const ServerOptions& options;
  const text::Tokenizer& tokenizer;
  EngineQueue& queue;
  Metrics& metrics;
  ResponseTracker& responses;
  int64_t capacity = 0;              // the engine's context, in tokens
  int64_t vocab_size = 0;            // the model's (padded) vocabulary
  std::vector<int32_t> stop_ids;     // <|im_end|>, <|endoftext|>
  ConstraintVocab constraint_vocab;  // the tags constrained decoding needs
  EngineCaches* caches = nullptr;    // null with --no-cache
  // The persistent suffix store (null: none), for /health.
  const cache::SuffixStore* suffix_store = nullptr;
  int64_t created = 0;      // unix seconds at start (/v1/models)
  uint64_t nonce_base = 0;  // mixed with a counter into request ids and default seeds
  std::atomic<uint64_t> next_request{0};
  std::atomic<bool> shutting_down{false};
};

// A fresh 64-bit value per request (ids, tool-call ids, the seed when none was sent).
uint64_t next_request_nonce(Service& svc);

}  // namespace anchorage::server

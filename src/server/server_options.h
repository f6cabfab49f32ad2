// ServerOptions: how the HTTP server listens and how much it takes in (docs/http-api.md). A
// value type, set once before the server starts and read-only afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/suffix_store.h"
#include "engine/lookup_drafter.h"
#include "server/api_keys.h"
#include "server/engine_caches.h"
#include "server/request_journal.h"

namespace anchorage::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: an ephemeral port (tests)
  // The id /v1/models lists and every response names. Requests may name any model: there is
  // one, and agent clients send the name from their own config.
  std::string model_name = "anchorage-small";
  // Requests waiting for the engine, the running one not counted; one more gets 429.
  size_t queue_capacity = 8;
  // On shutdown, seconds the running generation may go on before it is cut and its client is
  // told (an error: shutting_down); 0 = no bound.
  int drain_s = 30;
  // Request bodies above this get 413. The largest opencode body in the traces is 33 KB; an
  // agent conversation near a 128k-token context is a few MB.
  size_t max_body_bytes = size_t(16) << 20;
  // max_tokens when a request names none (the context's end bounds it as well).
  int64_t default_max_tokens = 4096;
  // --n-predict: the most tokens one request generates, whatever its max_tokens says (a
  // larger one is clamped, not refused, as llama-server does); -1: no cap.
  int64_t max_tokens_cap = -1;
  // Seconds a 429 or 503 asks the client to wait (Retry-After).
  int retry_after_seconds = 1;
  // A streamed response writes an SSE comment this often while it has nothing else to say
  // (a long prefill): it keeps proxies from timing out and finds a client that went away.
  int sse_ping_ms = 1000;
  // HTTP worker threads, which run the handlers; 0 = queue_capacity + 8 (every queued request
  // holds one while it waits, and /health and /metrics need a few more). Connections that are
  // idle or still sending their request hold none (http_transport.h).
  int http_threads = 0;
  // A request's headers must be complete this many seconds after its first byte (and its body
  // may not pause longer); then 408 and the connection closes.
  int header_timeout_s = 10;
  // A keep-alive connection with no request for this long is closed.
  int idle_timeout_s = 60;
  // Reasoning tokens a chat answer may write before the server closes its <think> block with
  // a hidden phrase (output_constraint.h); -1: no limit. A request's reasoning_budget wins.
  int64_t reasoning_budget = -1;
  // --compaction: `continuation` serves a recognised compaction request as the session's
  // conversation plus one turn (not the client's prompt; docs/compaction.md); `client` (the
  // default) serves it as sent.
  CompactionMode compaction = CompactionMode::kClient;
  // --draft lookup: speculative decoding with the lookup drafter (docs/speculation.md); it
  // changes no token or logprob, only how many forwards a generation takes. On by default
  // (performance.md "Speculation on an agent turn"); --draft off is plain decode.
  bool draft_lookup = true;
  engine::LookupDrafterOptions draft{};
  // The persistent suffix store (docs/suffix-store.md) in <cache.disk_root>/suffix: the lookup
  // drafter's second place to look, fed with every answered request after its answer. Off
  // with --no-suffix-store, and without a cache directory (--no-cache, --disk-cache off).
  bool suffix_store = true;
  cache::SuffixStoreOptions suffix{};
  // The cache tiers (docs/cache.md); cache.enabled false is --no-cache.
  CacheOptions cache;
  // --journal: one JSON line per request (request_journal.h); path empty: none.
  JournalOptions journal;
  // When set, POST /v1/cache/clear needs `Authorization: Bearer <admin_token>`; when not, a
  // clear is refused unless the server listens on loopback only.
  std::string admin_token;
  // --api-key, --api-key-file: when not empty, every route but /health needs
  // `Authorization: Bearer <key>` with one of them (or the admin token).
  std::vector<ApiKey> api_keys;
  // Shown by GET /props: the model file (empty: random weights) and the chat template family
  // the server renders.
  std::string model_path;
  std::string chat_template = "qwen3";
};

}  // namespace anchorage::server

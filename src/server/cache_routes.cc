// GET /v1/cache/stats, POST /v1/cache/clear, POST /v1/cache/peek, POST /v1/cache/prewarm
// (routes.h; docs/http-api.md "Cache routes"). The tiers belong to the engine thread: stats read
// the snapshot the caches publish after every change; clear and peek take the engine while it is
// idle (EngineQueue::run_when_idle).

#include "server/api_keys.h"
#include "server/completion_request.h"
#include "server/engine_caches.h"
#include "server/openai_json.h"
#include "server/prompt_builder.h"
#include "server/request_parser.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"

namespace anchorage::server {
namespace {

using Json = nlohmann::ordered_json;

// The peek waits this long for a running request to end (the seed's 3 s), and answers 409 at
// once while another request waits.
constexpr int kPeekWaitMs = 3000;
// A clear waits for the running request to end, however long it takes up to this.
constexpr int kClearWaitMs = 600000;

// A clear empties every tenant's caches: with an admin token only its holder may; without
// one, only a server no other machine can reach (loopback), whatever key the client sent.
std::optional<ApiError> clear_refusal(const Service& svc, const HttpRequest& req) {
  const std::string& admin = svc.options.admin_token;
  if (admin.empty()) {
    if (is_loopback_host(svc.options.host)) return std::nullopt;
    ApiError e = field_error("Authorization",
                             "this server listens beyond loopback: a cache clear needs "
                             "--admin-token",
                             "admin_token_required");
    e.http_status = 403;
    e.type = "permission_error";
    return e;
  }
  if (constant_time_equals(bearer_token(req), admin)) return std::nullopt;
  ApiError e =
      field_error("Authorization", "this route needs the admin bearer token", "invalid_api_key");
  e.http_status = 401;
  e.type = "authentication_error";
  return e;
}

}  // namespace

bool sees_all_tenants(const Service& svc, const HttpRequest& req) {
  return !svc.options.cache.tenant_scope || req.tenant == kAdminTenant;
}

void handle_cache_stats(Service& svc, const HttpRequest& req, HttpResponse& res) {
  if (!sees_all_tenants(svc, req)) {
    ApiError e = field_error("Authorization",
                             "under --cache-scope tenant the caches' figures need the admin token",
                             "admin_token_required");
    e.http_status = 403;
    e.type = "permission_error";
    return answer_error(svc, res, e);
  }
  Json body = svc.caches != nullptr ? to_json(svc.caches->stats()) : Json{{"enabled", false}};
  res.set_content(dump_json(body), "application/json");
}

void handle_cache_clear(Service& svc, const HttpRequest& req, HttpResponse& res) {
  if (auto e = clear_refusal(svc, req)) return answer_error(svc, res, *e);
  const std::string tier = req.query_param("tier").value_or("all");
  if (tier != "all" && tier != "ram" && tier != "disk") {
    return answer_error(svc, res, field_error("tier", "must be \"all\", \"ram\" or \"disk\""));
  }
  if (svc.caches != nullptr) {
    // ram: the caches in RAM; disk: the disk tier's files and admission counts (the caches in
    // RAM stay); all: both.
    core::Status s = svc.queue.run_when_idle(
        [&] {
          if (tier == "disk") {
            svc.caches->clear_disk();
          } else {
            svc.caches->clear(/*disk=*/tier == "all");
          }
        },
        kClearWaitMs,
        /*refuse_if_waiting=*/false);
    if (!s.is_ok()) {
      return answer_error(
          svc, res,
          s.code() == core::StatusCode::kCancelled ? shutting_down_error() : cache_busy_error());
    }
  }
  res.set_content(dump_json(Json{{"cleared", svc.caches != nullptr}, {"tier", tier}}),
                  "application/json");
}

namespace {

// The peek's and the prewarm's body: a chat body rendered as its request would be.
struct CacheBody {
  CompletionRequest request;
  std::vector<int32_t> prompt;
  std::string prompt_text;
};

std::optional<ApiError> parse_cache_body(const Service& svc, const HttpRequest& req, CacheBody* b) {
  if (auto e = parse_chat_body(req.body, session_header(req), &b->request)) return e;
  if (auto e = build_prompt(b->request, svc.tokenizer, svc.vocab_size, svc.capacity, &b->prompt,
                            &b->prompt_text))
    return e;
  b->request.session.tenant = req.tenant;
  return std::nullopt;
}

}  // namespace

void handle_cache_peek(Service& svc, const HttpRequest& req, HttpResponse& res) {
  CacheBody b;
  if (auto e = parse_cache_body(svc, req, &b)) return answer_error(svc, res, *e);
  CachePeek peek;
  peek.split.prompt_tokens = int64_t(b.prompt.size());
  peek.split.client_tokens = peek.split.prompt_tokens;
  peek.split.reread = peek.split.prompt_tokens;
  if (svc.caches != nullptr) {
    core::Status s = svc.queue.run_when_idle(
        [&] { peek = svc.caches->peek(b.prompt, b.prompt_text, b.request.session); }, kPeekWaitMs,
        /*refuse_if_waiting=*/true);
    if (!s.is_ok()) {
      return answer_error(
          svc, res,
          s.code() == core::StatusCode::kCancelled ? shutting_down_error() : cache_busy_error());
    }
  }
  const CacheSplit& c = peek.split;
  Json body{{"tier", std::string(cache::tier_name(c.source))},
            {"source", std::string(cache::name(c.source))},
            {"cached_tokens", c.cached},
            {"reread_tokens", c.reread},
            {"reread_eta_ms", peek.reread_eta_ms},
            {"restore_ms", peek.restore_ms},
            {"tokens", c.prompt_tokens},
            {"client_tokens", c.client_tokens},
            {"exact", c.exact},
            {"served", std::string(c.served_name())},
            {"differing", c.differing},
            {"aligned", std::string(alignment_name(c.aligned))},
            {"session", std::string(session_source_name(b.request.session.source))}};
  res.set_content(dump_json(body), "application/json");
}

// Only on an idle engine: it waits up to 3 s for a running request to end (as the peek), and
// not at all while one waits; it yields between blocks to a request that arrives.
void handle_cache_prewarm(Service& svc, const HttpRequest& req, HttpResponse& res) {
  CacheBody b;
  if (auto e = parse_cache_body(svc, req, &b)) return answer_error(svc, res, *e);
  CachePrewarm pw;
  pw.why = "not_on_disk";
  if (svc.caches != nullptr) {
    core::Status s = svc.queue.run_when_idle(
        [&] {
          pw = svc.caches->prewarm(b.prompt, b.prompt_text, b.request.session,
                                   [&] { return svc.queue.depth() > 0; });
        },
        svc.options.cache.prewarm_wait_ms, /*refuse_if_waiting=*/true);
    if (s.code() == core::StatusCode::kCancelled)
      return answer_error(svc, res, shutting_down_error());
    if (!s.is_ok()) pw.why = "busy";
  }
  Json body{{"prewarmed", pw.prewarmed}};
  if (pw.prewarmed) {
    body["tokens"] = pw.tokens;
    body["read_ms"] = pw.read_ms;
  } else {
    body["why"] = pw.why;
  }
  res.set_content(dump_json(body), "application/json");
}

}  // namespace anchorage::server

#include "server/routes.h"

namespace anchorage::server {
namespace {

constexpr Route kRoutes[] = {
    {"POST", "/v1/chat/completions", handle_chat_completions, "chat, whole or streamed (SSE)"},
    {"POST", "/v1/completions", handle_completions, "text completion (text or token ids)"},
    {"GET", "/v1/models", handle_models, "the served model"},
    {"GET", "/v1/models/{id}", handle_model, "one model (404 for another id)"},
    {"GET", "/health", handle_health, "200 ok, 503 while shutting down"},
    {"GET", "/metrics", handle_metrics, "Prometheus text"},
    {"GET", "/v1/cache/stats", handle_cache_stats, "every cache tier's counters"},
    {"POST", "/v1/cache/peek", handle_cache_peek, "where a chat body would resume"},
    {"POST", "/v1/cache/prewarm", handle_cache_prewarm,
     "read a conversation back from the spill ahead of its request"},
    {"POST", "/v1/cache/clear", handle_cache_clear, "empty the caches (--admin-token)"},
    {"POST", "/tokenize", handle_tokenize, "llama-server's: text to token ids"},
    {"POST", "/detokenize", handle_detokenize, "llama-server's: token ids to text"},
    {"GET", "/props", handle_props, "llama-server's: model, context, defaults"},
};

// One path against one pattern; {id} matches a non-empty segment.
bool matches(std::string_view pattern, std::string_view path, std::string* param) {
  const size_t brace = pattern.find("{id}");
  if (brace == std::string_view::npos) return pattern == path;
  if (path.size() <= brace || path.substr(0, brace) != pattern.substr(0, brace)) return false;
  const std::string_view rest = path.substr(brace);
  if (rest.find('/') != std::string_view::npos) return false;
  if (param != nullptr) *param = std::string(rest);
  return true;
}

}  // namespace

std::span<const Route> route_table() {
  return kRoutes;
}

const Route* find_route(std::string_view method, std::string_view path, std::string* param) {
  for (const Route& r : kRoutes) {
    if (r.method == method && matches(r.pattern, path, param)) return &r;
  }
  return nullptr;
}

std::string_view route_label(std::string_view path) {
  for (const Route& r : kRoutes) {
    if (matches(r.pattern, path, nullptr)) return r.pattern;
  }
  return "other";
}

}  // namespace anchorage::server

// SessionKey: which conversation a request continues, as the client names it. The caches (a
// later issue) keep a session's state apart from other traffic under this key; today it is
// carried on the request and logged as a hash only.
//
// Where it comes from (docs/http-api.md "Sessions"), first match wins:
//   1. the body field `prompt_cache_key` — OpenAI's own field for "requests that share a
//      prefix", sent by the official SDKs when set;
//   2. the `x-session-id` header — opencode sends it (with its `ses_…` id) on every request;
//   3. none: a request without a key is matched by its tokens alone.
// `user` is not used: it names an end user, who may hold many conversations at once.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace anchorage::server {

inline constexpr std::string_view kSessionBodyField = "prompt_cache_key";
inline constexpr std::string_view kSessionHeader = "x-session-id";
// Longer keys are refused rather than cut (two keys cut to one prefix would merge sessions).
inline constexpr size_t kMaxSessionKeyBytes = 256;

struct SessionKey {
  enum class Source { kNone, kBody, kHeader };
  Source source = Source::kNone;
  std::string id;  // empty when source is kNone
  // The tenant of the request's API key (api_keys.h; "" without keys), set by the route from
  // HttpRequest::tenant. Two tenants' sessions of one id are two sessions, and under
  // --cache-scope tenant the caches offer a request only its tenant's states.
  std::string tenant;

  bool empty() const { return source == Source::kNone; }
  // For logs and the tiers: the tenant and the id, hashed; the key itself is client text and
  // is never printed.
  uint64_t hash() const;
};

std::string_view session_source_name(SessionKey::Source source);

// Reads the key from the body field, else the header value (nullopt: no header). Errors: the
// body field is not a string, or either value is empty or too long.
std::optional<ApiError> resolve_session(const nlohmann::ordered_json& body,
                                        std::optional<std::string_view> header, SessionKey* out);

}  // namespace anchorage::server

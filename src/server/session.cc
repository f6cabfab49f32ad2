#include "server/session.h"

namespace anchorage::server {

uint64_t SessionKey::hash() const {
  // FNV-1a 64: a stable label for logs, not a security boundary.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::string_view s) {
    for (const unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  // Without a tenant the hash is the id's alone (the journal's hashes stay as they were).
  if (!tenant.empty()) {
    mix(tenant);
    mix(std::string_view("\0", 1));
  }
  mix(id);
  return h;
}

std::string_view session_source_name(SessionKey::Source source) {
  switch (source) {
    case SessionKey::Source::kBody:
      return "body";
    case SessionKey::Source::kHeader:
      return "header";
    case SessionKey::Source::kNone:
      break;
  }
  return "none";
}

namespace {

// An empty key is no key, in the body as in the header: clients fill a header or field from
// an unset variable ("x-session-id: "), and the header could not be told apart from an absent
// one by every HTTP stack anyway. One rule for both places; callers skip empty keys.
std::optional<ApiError> check_key(std::string_view key, std::string_view field) {
  if (key.size() > kMaxSessionKeyBytes) {
    return field_error(std::string(field),
                       "must be at most " + std::to_string(kMaxSessionKeyBytes) + " bytes");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> resolve_session(const nlohmann::ordered_json& body,
                                        std::optional<std::string_view> header, SessionKey* out) {
  *out = SessionKey{};
  const auto it = body.find(kSessionBodyField);
  if (it != body.end() && !it->is_null()) {
    if (!it->is_string()) {
      return field_error(std::string(kSessionBodyField), "must be a string", "invalid_type");
    }
    const auto& key = it->get_ref<const std::string&>();
    if (!key.empty()) {
      if (auto e = check_key(key, kSessionBodyField)) return e;
      *out = SessionKey{SessionKey::Source::kBody, key, {}};
      return std::nullopt;
    }
  }
  if (header && !header->empty()) {
    if (auto e = check_key(*header, kSessionHeader)) return e;
    *out = SessionKey{SessionKey::Source::kHeader, std::string(*header), {}};
  }
  return std::nullopt;
}

}  // namespace anchorage::server

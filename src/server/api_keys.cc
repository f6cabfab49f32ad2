#include "server/api_keys.h"

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "server/http_message.h"

namespace anchorage::server {
namespace {

constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxTenantBytes = 64;

bool valid_tenant_name(std::string_view t) {
  if (t.empty() || t.size() > kMaxTenantBytes) return false;
  for (const char c : t) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The line's whitespace-separated fields.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

bool constant_time_equals(std::string_view a, std::string_view b) {
  // Every byte of `b` (the secret) is read whatever `a` holds; a length difference is folded
  // in, not returned early.
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff |= unsigned(x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

std::string_view bearer_token(const HttpRequest& req) {
  const std::optional<std::string_view> h = req.header("Authorization");
  constexpr std::string_view kScheme = "Bearer ";
  if (!h || h->size() < kScheme.size() || !iequals(h->substr(0, kScheme.size()), kScheme))
    return {};
  return h->substr(kScheme.size());
}

std::string tenant_of(const ApiKey& key) {
  if (!key.tenant.empty()) return key.tenant;
  char buf[24];
  std::snprintf(buf, sizeof(buf), "key-%016" PRIx64,
                uint64_t(XXH3_64bits(key.key.data(), key.key.size())));
  return buf;
}

std::optional<std::string> authenticate(std::string_view token, const std::vector<ApiKey>& keys,
                                        std::string_view admin_token) {
  // Every key is compared, also after a match, so the time does not say which one matched.
  const ApiKey* match = nullptr;
  for (const ApiKey& k : keys)
    if (constant_time_equals(token, k.key) && match == nullptr) match = &k;
  const bool admin = !admin_token.empty() && constant_time_equals(token, admin_token);
  if (admin) return std::string(kAdminTenant);
  if (match != nullptr) return tenant_of(*match);
  return std::nullopt;
}

core::Result<std::vector<ApiKey>> parse_api_key_file(std::string_view text) {
  std::vector<ApiKey> keys;
  std::unordered_set<std::string> seen;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::vector<std::string_view> f = fields_of(line);
    if (f.empty() || f[0][0] == '#') continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (f.size() > 2)
      return core::Status::invalid_argument(where + "expected `key` or `key tenant`");
    if (f[0].size() > kMaxKeyBytes)
      return core::Status::invalid_argument(where + "the key is longer than 4096 bytes");
    if (f.size() == 2 && !valid_tenant_name(f[1]))
      return core::Status::invalid_argument(
          where + "a tenant name is 1-64 bytes of letters, digits, '.', '_' or '-'");
    if (!seen.insert(std::string(f[0])).second)
      return core::Status::invalid_argument(where + "the key is listed twice");
    keys.push_back(ApiKey{std::string(f[0]), f.size() == 2 ? std::string(f[1]) : std::string()});
  }
  if (keys.empty()) return core::Status::invalid_argument("the file holds no key");
  return keys;
}

core::Result<std::vector<ApiKey>> read_api_key_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Status::io_error("cannot read the key file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return core::Status::io_error("cannot read the key file " + path);
  auto keys = parse_api_key_file(text.str());
  if (!keys) return keys.error().with_prefix(path + ": ");
  return keys;
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

}  // namespace anchorage::server

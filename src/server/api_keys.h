// ApiKeys: who may call the server (--api-key, --api-key-file, --admin-token) and which tenant
// a request belongs to (docs/http-api.md "Keys and tenants"). Every secret comparison of the
// server goes through constant_time_equals, here and nowhere else.
//
// A key file holds one key per line, optionally followed by whitespace and a tenant name
// ([A-Za-z0-9._-], at most 64 bytes); blank lines and lines starting with '#' are ignored. A
// key without a tenant is a tenant of its own. Keys are never printed: errors name the line.
//
// Thread safety: plain values, read-only once the server starts; the functions are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace anchorage::server {

struct HttpRequest;

struct ApiKey {
  std::string key;
  std::string tenant;  // empty: the key's own tenant (tenant_of names it)
};

// The tenant of the --admin-token: a name no key file can give ('#' is not allowed there).
inline constexpr std::string_view kAdminTenant = "#admin";

// True when a and b are equal; the time taken depends on their lengths only, never on where
// they first differ, so a refusal's timing says nothing about how much of a guess was right.
bool constant_time_equals(std::string_view a, std::string_view b);

// The bearer token of `Authorization: Bearer <token>` ("" when the header is absent or has
// another scheme).
std::string_view bearer_token(const HttpRequest& req);

// The tenant a key's requests belong to: its named tenant, else "key-" and a 64-bit hash of
// the key (stable across restarts, never the key itself).
std::string tenant_of(const ApiKey& key);

// Which tenant `token` authenticates as, comparing it with every key (and the admin token,
// when not empty) in constant time; nullopt: none matches.
std::optional<std::string> authenticate(std::string_view token, const std::vector<ApiKey>& keys,
                                        std::string_view admin_token);

// The keys of a key file's text. InvalidArgument names the line (never its content): an empty
// or over-long key, a bad tenant name, more than two fields, a key listed twice.
core::Result<std::vector<ApiKey>> parse_api_key_file(std::string_view text);
// Reads and parses the file (IOError when it cannot be read).
core::Result<std::vector<ApiKey>> read_api_key_file(const std::string& path);

// True when `host` names the loopback interface only (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(std::string_view host);

}  // namespace anchorage::server

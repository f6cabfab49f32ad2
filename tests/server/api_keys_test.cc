#include "server/api_keys.h"

#include <gtest/gtest.h>

#include "server/http_message.h"

namespace anchorage::server {
namespace {

TEST(ApiKeys, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equals("sk-abc", "sk-abc"));
  EXPECT_TRUE(constant_time_equals("", ""));
  EXPECT_FALSE(constant_time_equals("sk-ab", "sk-abc"));    // a prefix
  EXPECT_FALSE(constant_time_equals("sk-abcd", "sk-abc"));  // longer
  EXPECT_FALSE(constant_time_equals("sk-abd", "sk-abc"));   // last byte
  EXPECT_FALSE(constant_time_equals("tk-abc", "sk-abc"));   // first byte
  EXPECT_FALSE(constant_time_equals("", "sk-abc"));
  EXPECT_FALSE(constant_time_equals("sk-abc", ""));
  // A NUL where the secret ends is not equality.
  EXPECT_FALSE(constant_time_equals(std::string_view("sk-abc\0", 7), "sk-abc"));
}

TEST(ApiKeys, BearerToken) {
  HttpRequest q;
  EXPECT_EQ(bearer_token(q), "");
  q.headers = {{"authorization", "Bearer sk-1"}};
  EXPECT_EQ(bearer_token(q), "sk-1");
  q.headers = {{"Authorization", "bearer sk-2"}};
  EXPECT_EQ(bearer_token(q), "sk-2");
  q.headers = {{"Authorization", "Basic c2stMQ=="}};
  EXPECT_EQ(bearer_token(q), "");
}

TEST(ApiKeys, AuthenticateNamesTheTenant) {
  const std::vector<ApiKey> keys = {{"sk-a", ""}, {"sk-b", "team"}, {"sk-c", "team"}};
  EXPECT_EQ(authenticate("sk-b", keys, ""), "team");
  EXPECT_EQ(authenticate("sk-c", keys, ""), "team");
  const auto a = authenticate("sk-a", keys, "");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->starts_with("key-"));
  EXPECT_EQ(a->find("sk-a"), std::string::npos);  // never the key itself
  EXPECT_EQ(*a, tenant_of(keys[0]));
  EXPECT_NE(tenant_of(ApiKey{"sk-x", ""}), *a);
  EXPECT_FALSE(authenticate("sk-", keys, ""));
  EXPECT_FALSE(authenticate("", keys, ""));
  EXPECT_FALSE(authenticate("", keys, ""));
  EXPECT_EQ(authenticate("adm", keys, "adm"), std::string(kAdminTenant));
  EXPECT_FALSE(authenticate("adm", keys, ""));
}

TEST(ApiKeys, ParsesAKeyFile) {
  auto keys = parse_api_key_file(
      "# the team's keys\n"
      "sk-one\n"
      "\n"
      "   sk-two   alpha  \r\n"
      "\tsk-three beta\n"
      "sk-four");
  ASSERT_TRUE(keys) << keys.error().to_string();
  ASSERT_EQ(keys->size(), 4u);
  EXPECT_EQ((*keys)[0].key, "sk-one");
  EXPECT_EQ((*keys)[0].tenant, "");
  EXPECT_EQ((*keys)[1].key, "sk-two");
  EXPECT_EQ((*keys)[1].tenant, "alpha");
  EXPECT_EQ((*keys)[2].tenant, "beta");
  EXPECT_EQ((*keys)[3].key, "sk-four");
}

TEST(ApiKeys, RefusesABadKeyFileNamingTheLineNotTheKey) {
  struct Case {
    const char* text;
    const char* line;
  } cases[] = {
      {"sk-1\nsk-secret a b\n", "line 2"},
      {"sk-1 ok\nsk-secret bad#name\n", "line 2"},
      {"sk-secret\n\nsk-secret\n", "line 3"},
      {"# only a comment\n\n", "no key"},
      {"", "no key"},
  };
  for (const Case& c : cases) {
    auto keys = parse_api_key_file(c.text);
    ASSERT_FALSE(keys) << c.text;
    EXPECT_NE(keys.error().message().find(c.line), std::string::npos) << keys.error().message();
    EXPECT_EQ(keys.error().message().find("sk-secret"), std::string::npos)
        << keys.error().message();
  }
  EXPECT_FALSE(read_api_key_file("/nonexistent/keys.txt"));
}

TEST(ApiKeys, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "localhost", "::1"})
    EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"0.0.0.0", "::", "192.168.1.2", "10.0.0.1", ""})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

}  // namespace
}  // namespace anchorage::server

// UTF-8 scanning and lossy decoding by Unicode §3.9, including the worked example of
// "U+FFFD Substitution of Maximal Subparts" (Table 3-8).
#include "text/utf8.h"

#include <string>

#include <gtest/gtest.h>

namespace anchorage::text {
namespace {

constexpr char kFffd[] = "\xEF\xBF\xBD";

std::string lossy(std::string_view s) {
  std::string out;
  EXPECT_EQ(utf8_append_lossy(s, /*final=*/true, &out), s.size());
  return out;
}

TEST(Utf8, ScanKinds) {
  EXPECT_EQ(utf8_scan("A", 0).kind, Utf8Scan::kValid);
  const Utf8Scan euro = utf8_scan("\xE2\x82\xAC", 0);
  EXPECT_EQ(euro.kind, Utf8Scan::kValid);
  EXPECT_EQ(euro.n_bytes, 3);
  EXPECT_EQ(euro.cp, U'\u20AC');
  EXPECT_EQ(utf8_scan("\xF0\x9F\x98\x80", 0).cp, U'\U0001F600');
  EXPECT_EQ(utf8_scan("\xE2\x82", 0).kind, Utf8Scan::kIncomplete);
  EXPECT_EQ(utf8_scan("\xC0\xAF", 0).kind, Utf8Scan::kInvalid);          // overlong '/'
  EXPECT_EQ(utf8_scan("\xE0\x80\xAF", 0).n_bytes, 1);                    // overlong, 3 bytes
  EXPECT_EQ(utf8_scan("\xED\xA0\x80", 0).kind, Utf8Scan::kInvalid);      // a surrogate
  EXPECT_EQ(utf8_scan("\xF4\x90\x80\x80", 0).kind, Utf8Scan::kInvalid);  // > U+10FFFF
  EXPECT_EQ(utf8_scan("\x80", 0).kind, Utf8Scan::kInvalid);
  EXPECT_EQ(utf8_scan("\xE2\x82X", 0).n_bytes, 2);  // the maximal subpart E2 82
}

TEST(Utf8, MaximalSubpartsOfTable3_8) {
  // Unicode 15 §3.9, Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  const std::string want =
      std::string("a") + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d";
  EXPECT_EQ(lossy(in), want);
}

TEST(Utf8, ValidRunAndIsValid) {
  EXPECT_TRUE(utf8_is_valid(""));
  EXPECT_TRUE(utf8_is_valid("plain ASCII longer than eight bytes"));
  EXPECT_TRUE(utf8_is_valid("\xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80"));
  EXPECT_FALSE(utf8_is_valid("abcdefgh\xFF"));
  EXPECT_EQ(utf8_valid_run("abcdefghij\xC3\xA9\xFFxyz", 0), 12u);
  EXPECT_EQ(utf8_valid_run("ab\xFFxyz", 3), 3u);
}

TEST(Utf8, LossyStreamingHoldsBackAnIncompleteTail) {
  std::string out;
  EXPECT_EQ(utf8_append_lossy("ab\xF0\x9F", /*final=*/false, &out), 2u);
  EXPECT_EQ(out, "ab");
  out.clear();
  EXPECT_EQ(utf8_append_lossy("ab\xF0\x9F", /*final=*/true, &out), 4u);
  EXPECT_EQ(out, std::string("ab") + kFffd);
}

TEST(Utf8, AppendEncodesEveryLength) {
  std::string s;
  for (char32_t cp : {U'\u0041', U'\u00E9', U'\u20AC', U'\U0001F600', U'\U0010FFFF'}) {
    s.clear();
    utf8_append(cp, &s);
    const Utf8Scan c = utf8_scan(s, 0);
    EXPECT_EQ(c.kind, Utf8Scan::kValid);
    EXPECT_EQ(c.n_bytes, s.size());
    EXPECT_EQ(c.cp, cp);
  }
}

}  // namespace
}  // namespace anchorage::text

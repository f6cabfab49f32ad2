// NFC against Python's unicodedata (tests/text/golden/nfc_golden.jsonl, written by
// gen_nfc_golden.py for every code point NFC may touch and random mixes), plus worked cases.
#include "text/unicode_nfc.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/qwen3_tokenizer_data.h"

namespace anchorage::text {
namespace {

std::string nfc(std::string_view s) {
  std::string out;
  nfc_append(s, &out);
  return out;
}

TEST(UnicodeNfc, WorkedCases) {
  EXPECT_EQ(nfc("cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(nfc("A\u030a"), "\u00c5");
  EXPECT_EQ(nfc("\u212b"), "\u00c5");               // angstrom sign: a singleton
  EXPECT_EQ(nfc("a\u0301\u0323"), "\u1ea1\u0301");  // marks reordered, then composed
  EXPECT_EQ(nfc("\u1100\u1161\u11a8"), "\uac01");   // Hangul L V T
  EXPECT_EQ(nfc("\uac00\u11a8"), "\uac01");         // Hangul LV + T
  EXPECT_EQ(nfc("\uf900"), "\u8c48");               // CJK compatibility ideograph
  EXPECT_EQ(nfc("\u0958"), "\u0915\u093c");         // composition exclusion
  EXPECT_EQ(nfc("e\u0301\u0301"), "\u00e9\u0301");  // the second acute is blocked
  EXPECT_EQ(nfc("\u0301start"), "\u0301start");     // a mark with no starter
  EXPECT_EQ(nfc(""), "");
  EXPECT_EQ(nfc("plain ASCII stays"), "plain ASCII stays");
  EXPECT_EQ(nfc("\u4f60\u597d \xF0\x9F\x98\x80"), "\u4f60\u597d \xF0\x9F\x98\x80");
}

TEST(UnicodeNfc, QuickCheck) {
  EXPECT_TRUE(nfc_quick_check("hello"));
  EXPECT_TRUE(nfc_quick_check("\u4f60\u597d"));
  EXPECT_FALSE(nfc_quick_check("e\u0301"));
  EXPECT_FALSE(nfc_quick_check("\uf900"));
}

TEST(UnicodeNfc, MatchesPythonUnicodedata) {
  EXPECT_STREQ(nfc_unicode_version(), "14.0.0");
  const std::string path = testing::source_path("tests/text/golden/nfc_golden.jsonl");
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::string line;
  size_t n = 0, changed = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_array() && !j.empty()) << "line " << n + 1;
    const std::string input = j[0].get<std::string>();
    const std::string want = j.size() > 1 ? j[1].get<std::string>() : input;
    changed += j.size() > 1;
    const std::string got = nfc(input);
    ASSERT_EQ(got, want) << "line " << n + 1;
    if (nfc_quick_check(input)) {
      ASSERT_EQ(input, want) << "quick check wrong, line " << n + 1;
    }
    ++n;
  }
  EXPECT_GT(n, 10000u);
  EXPECT_GT(changed, 3000u);
}

}  // namespace
}  // namespace anchorage::text

// PreTokenizer: the Qwen2 split regex through PCRE2, the \s rewrite to Unicode White_Space,
// Isolated gaps, and compile errors.
#include "text/pretokenizer.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace anchorage::text {
namespace {

// The pre_tokenizer Split pattern of Qwen2/Qwen3's tokenizer.json.
constexpr char kQwen2Pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

std::vector<std::string> split(const PreTokenizer& p, std::string_view text) {
  std::vector<std::string_view> pieces;
  p.split(text, &pieces);
  return {pieces.begin(), pieces.end()};
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Qwen2Split) {
  auto p = PreTokenizer::create(kQwen2Pattern);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(split(*p, "Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split(*p, "I'm DON'T"), (Pieces{"I", "'m", " DON", "'T"}));
  EXPECT_EQ(split(*p, "12345"), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split(*p, "a  b"), (Pieces{"a", " ", " b"}));
  EXPECT_EQ(split(*p, "x\n\n\n"), (Pieces{"x", "\n\n\n"}));
  EXPECT_EQ(split(*p, "end   "), (Pieces{"end", "   "}));
  EXPECT_EQ(split(*p, "f(x);\n"), (Pieces{"f", "(x", ");\n"}));
  EXPECT_EQ(split(*p, "\u4f60\u597d\u4e16\u754c"), (Pieces{"\u4f60\u597d\u4e16\u754c"}));
  EXPECT_TRUE(split(*p, "").empty());
}

TEST(PreTokenizer, WhiteSpaceIsTheUnicodeProperty) {
  auto p = PreTokenizer::create(kQwen2Pattern);
  ASSERT_TRUE(p);
  // U+3000 and U+0085 are White_Space: a run of them before a letter splits like spaces.
  EXPECT_EQ(split(*p, "a\u3000\u3000b"), (Pieces{"a", "\u3000", "\u3000b"}));
  EXPECT_EQ(split(*p, "a\u0085\u0085b"), (Pieces{"a", "\u0085", "\u0085b"}));
  // U+FEFF and U+180E are not (JavaScript counts U+FEFF, PCRE2 counts U+180E).
  EXPECT_EQ(split(*p, "a\ufeff\ufeffb"), (Pieces{"a", "\ufeff\ufeff", "b"}));
  EXPECT_EQ(split(*p, "a\u180e\u180eb"), (Pieces{"a", "\u180e\u180e", "b"}));
}

TEST(PreTokenizer, GapsBetweenMatchesArePiecesToo) {
  auto p = PreTokenizer::create("[0-9]+");
  ASSERT_TRUE(p);
  EXPECT_EQ(split(*p, "ab12cd345"), (Pieces{"ab", "12", "cd", "345"}));
  EXPECT_EQ(split(*p, "xyz"), (Pieces{"xyz"}));
}

TEST(PreTokenizer, EmptyMatchesAreSkipped) {
  auto p = PreTokenizer::create("a*");
  ASSERT_TRUE(p);
  EXPECT_EQ(split(*p, "baab\u00e9"), (Pieces{"b", "aa", "b\u00e9"}));
}

TEST(PreTokenizer, RewriteOfWhitespaceClasses) {
  auto r = rewrite_whitespace_classes("\\s+(?!\\S)|[^\\s\\p{L}]|[]\\s]|[[:alpha:]\\s]");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->find("\\s"), std::string::npos);
  EXPECT_EQ(r->find("\\S"), std::string::npos);
  EXPECT_NE(r->find("[[:alpha:]\\t"), std::string::npos);
  EXPECT_EQ(*rewrite_whitespace_classes("a\\\\s"), "a\\\\s");  // an escaped backslash, then 's'
  EXPECT_EQ(*rewrite_whitespace_classes("\\s"),
            "[\\t\\n\\x0B\\f\\r\\x20\\x85\\xA0\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
            "\\x{202F}\\x{205F}\\x{3000}]");
  auto bad = rewrite_whitespace_classes("[^\\S]");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::StatusCode::kUnsupported);
}

TEST(PreTokenizer, BadPatternIsAnError) {
  auto p = PreTokenizer::create("(unclosed");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(p.error().message().find("does not compile"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::text

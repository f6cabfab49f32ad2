// Golden test: our Tokenizer against reference tokenizers no one here wrote
// (@huggingface/tokenizers and @lenml/tokenizers from npm, which agree on every case) on the
// same Qwen3 tokenizer.json. tests/text/golden/gen_tokenizer_golden.sh wrote the golden file;
// its cases are listed in tokenizer_cases.py (code, JSON, CJK, emoji, whitespace runs,
// numbers, contractions, scripts, NFC, special tokens in text, random mixes, and the opencode
// captures rendered with the Qwen3 chat template, whole and in parts). Ids must be equal
// exactly and decoded text byte for byte.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/qwen3_tokenizer_data.h"
#include "text/stream_decoder.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace anchorage::text {
namespace {

using testing::qwen3_tokenizer;
using testing::source_path;

struct GoldenCase {
  std::string name;
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;       // decode(ids)
  std::string decoded_skip;  // decode(ids, skip_special_tokens)
};

// Reads the golden file; an empty vector and *error on failure.
std::vector<GoldenCase> read_golden(std::string* error) {
  const std::string path = source_path("tests/text/golden/tokenizer_golden.jsonl");
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open " + path;
    return {};
  }
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("text") || !j.contains("ids")) {
      *error = "bad line " + std::to_string(cases.size() + 1) + " in " + path;
      return {};
    }
    GoldenCase c;
    c.name = j["name"].get<std::string>();
    c.text = j["text"].get<std::string>();
    for (const auto& id : j["ids"]) c.ids.push_back(id.get<int32_t>());
    c.decoded = j.contains("decoded") ? j["decoded"].get<std::string>() : c.text;
    c.decoded_skip = j.contains("decoded_skip") ? j["decoded_skip"].get<std::string>() : c.decoded;
    cases.push_back(std::move(c));
  }
  return cases;
}

const std::vector<GoldenCase>& golden(std::string* error) {
  static std::string load_error;
  static const std::vector<GoldenCase> cases = read_golden(&load_error);
  *error = load_error;
  return cases;
}

class TokenizerGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    tok_ = qwen3_tokenizer(&error);
    ASSERT_NE(tok_, nullptr) << error;
    cases_ = &golden(&error);
    ASSERT_FALSE(cases_->empty()) << error;
  }
  const Tokenizer* tok_ = nullptr;
  const std::vector<GoldenCase>* cases_ = nullptr;
};

TEST_F(TokenizerGolden, CoversWhatTheIssueAsksFor) {
  size_t renders = 0, specials = 0;
  for (const GoldenCase& c : *cases_) {
    if (c.name.rfind("trace/", 0) == 0 && c.name.ends_with("/render")) ++renders;
    if (c.name.rfind("special/", 0) == 0) ++specials;
  }
  EXPECT_GE(cases_->size(), 300u);
  EXPECT_GE(renders, 14u);  // the 16 captures, of which two pairs render the same
  EXPECT_GE(specials, 20u);
}

TEST_F(TokenizerGolden, EncodeMatchesReferenceIds) {
  size_t mismatches = 0;
  for (const GoldenCase& c : *cases_) {
    const std::vector<int32_t> ids = tok_->encode(c.text);
    if (ids != c.ids) {
      // Names and ids only: the golden texts include prompts, which are never printed.
      size_t at = 0;
      while (at < ids.size() && at < c.ids.size() && ids[at] == c.ids[at]) ++at;
      ADD_FAILURE() << c.name << ": " << ids.size() << " ids, reference " << c.ids.size()
                    << ", first difference at index " << at;
      if (++mismatches == 20) break;
    }
  }
}

TEST_F(TokenizerGolden, EncodeMatchesWithAColdCache) {
  tok_->test_clear_cache();
  for (const GoldenCase& c : *cases_) {
    if (c.text.size() > 4000) continue;  // the renders run in the test above
    tok_->test_clear_cache();
    EXPECT_EQ(tok_->encode(c.text), c.ids) << c.name;
  }
}

TEST_F(TokenizerGolden, DecodeMatchesReferenceText) {
  for (const GoldenCase& c : *cases_) {
    EXPECT_TRUE(tok_->decode(c.ids) == c.decoded) << c.name;
    EXPECT_TRUE(tok_->decode(c.ids, /*skip_special_tokens=*/true) == c.decoded_skip) << c.name;
  }
}

TEST_F(TokenizerGolden, StreamDecodeEqualsDecode) {
  for (const GoldenCase& c : *cases_) {
    StreamDecoder stream(*tok_);
    std::string out;
    for (int32_t id : c.ids) {
      const size_t before = out.size();
      stream.push(id, &out);
      // Every push gives whole characters only.
      ASSERT_TRUE(utf8_is_valid(std::string_view(out).substr(before))) << c.name;
    }
    stream.flush(&out);
    EXPECT_TRUE(out == c.decoded) << c.name;
  }
}

// whitespace_ids() is the plain definition over every id: not an added token, bytes non-empty and
// only spaces, tabs and newlines (Qwen3 has a few hundred such pieces: runs of spaces, "\n\n").
TEST_F(TokenizerGolden, WhitespaceIdsAreThePlainLoop) {
  std::vector<int32_t> want;
  for (int32_t id = 0; id < tok_->vocab_size(); ++id) {
    if (tok_->is_added(id)) continue;
    const std::string_view b = tok_->token_bytes(id);
    if (!b.empty() && b.find_first_not_of(" \t\n\r") == std::string_view::npos) want.push_back(id);
  }
  EXPECT_GT(want.size(), 50u);
  EXPECT_EQ(tok_->whitespace_ids(), want);
}

}  // namespace
}  // namespace anchorage::text

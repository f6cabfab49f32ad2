// parse_tokenizer_json / Tokenizer::from_json on small hand-made files: a working toy
// tokenizer, and each kind of bad or unsupported file giving a clear Status (never a crash or
// an exception).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/byte_level.h"
#include "text/tokenizer.h"
#include "text/tokenizer_spec.h"

namespace anchorage::text {
namespace {

using core::StatusCode;
using nlohmann::json;

// A tokenizer.json with the 256 byte tokens (id == byte), "ab" (256) and "Ġab" (257), the
// merges a+b and Ġ+ab, one special and one non-special added token, NFC and a Split.
json toy() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) {
    vocab[byte_level_from_bytes(std::string(1, static_cast<char>(b)))] = b;
  }
  vocab["ab"] = 256;
  vocab["\u0120ab"] = 257;
  json j;
  j["version"] = "1.0";
  j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array({{{"type", "Split"},
                     {"pattern", {{"Regex", " ?\\p{L}+|\\s+|[^\\s\\p{L}]+"}}},
                     {"behavior", "Isolated"},
                     {"invert", false}},
                    {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  j["decoder"] = {{"type", "ByteLevel"}};
  j["post_processor"] = nullptr;
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"byte_fallback", false},
                {"vocab", vocab},
                {"merges", json::array({"a b", json::array({"\u0120", "ab"})})}};
  j["added_tokens"] = json::array({{{"id", 300}, {"content", "<|end|>"}, {"special", true}},
                                   {{"id", 301}, {"content", "<x>"}, {"special", false}}});
  return j;
}

core::Status error_of(const json& j) {
  const auto r = Tokenizer::from_json(j.dump());
  return r ? core::Status::ok() : r.error();
}

TEST(TokenizerJson, ToyTokenizerWorks) {
  auto tok = Tokenizer::from_json(toy().dump());
  ASSERT_TRUE(tok) << tok.error().to_string();
  EXPECT_EQ(tok->vocab_size(), 302);
  EXPECT_EQ(tok->encode("ab ab<|end|>x<x>"), (std::vector<int32_t>{256, 257, 300, 'x', 301}));
  EXPECT_EQ(tok->decode(tok->encode("ab ab<|end|>x")), "ab ab<|end|>x");
  EXPECT_EQ(tok->encode("e\u0301"), tok->encode("\u00e9"));  // NFC first
  EXPECT_EQ(tok->token_id("<|end|>"), 300);
  EXPECT_TRUE(tok->is_special(300));
  EXPECT_FALSE(tok->is_special(301));
}

TEST(TokenizerJson, MergesInEitherForm) {
  auto spec = parse_tokenizer_json(toy().dump());
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->merges, (std::vector<std::pair<int32_t, int32_t>>{{'a', 'b'}, {0x20, 256}}));
  EXPECT_TRUE(spec->nfc);
  EXPECT_EQ(spec->added_tokens.size(), 2u);
}

TEST(TokenizerJson, NotJson) {
  const auto r = Tokenizer::from_json("{\"model\": [1, 2");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of(json::array()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Tokenizer::from_json("").error().code(), StatusCode::kInvalidArgument);
}

TEST(TokenizerJson, WrongShapesNameTheField) {
  struct Case {
    const char* what;
    void (*edit)(json*);
    StatusCode code;
    const char* field;
  };
  const Case cases[] = {
      {"no model", [](json* j) { j->erase("model"); }, StatusCode::kInvalidArgument, "model"},
      {"vocab array", [](json* j) { (*j)["model"]["vocab"] = json::array(); },
       StatusCode::kInvalidArgument, "model.vocab"},
      {"vocab string id", [](json* j) { (*j)["model"]["vocab"]["ab"] = "x"; },
       StatusCode::kInvalidArgument, "model.vocab"},
      {"huge id", [](json* j) { (*j)["model"]["vocab"]["ab"] = 1LL << 40; },
       StatusCode::kInvalidArgument, "model.vocab"},
      {"not byte-level", [](json* j) { (*j)["model"]["vocab"][" space"] = 258; },
       StatusCode::kInvalidArgument, "model.vocab"},
      {"merge unknown", [](json* j) { (*j)["model"]["merges"].push_back("zz q"); },
       StatusCode::kInvalidArgument, "model.merges[2]"},
      {"merge shape", [](json* j) { (*j)["model"]["merges"].push_back(7); },
       StatusCode::kInvalidArgument, "model.merges[2]"},
      {"merge result", [](json* j) { (*j)["model"]["merges"].push_back("b a"); },
       StatusCode::kInvalidArgument, "model.merges[2]"},
      {"added no id", [](json* j) { (*j)["added_tokens"][0].erase("id"); },
       StatusCode::kInvalidArgument, "added_tokens[0]"},
      {"bad regex",
       [](json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "("; },
       StatusCode::kInvalidArgument, "pre_tokenizer"},
      {"model WordPiece", [](json* j) { (*j)["model"]["type"] = "WordPiece"; },
       StatusCode::kUnsupported, "model"},
      {"byte fallback", [](json* j) { (*j)["model"]["byte_fallback"] = true; },
       StatusCode::kUnsupported, "byte_fallback"},
      {"dropout", [](json* j) { (*j)["model"]["dropout"] = 0.1; }, StatusCode::kUnsupported,
       "dropout"},
      {"NFKC", [](json* j) { (*j)["normalizer"]["type"] = "NFKC"; }, StatusCode::kUnsupported,
       "normalizer"},
      {"Split merged",
       [](json* j) {
         (*j)["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "MergedWithPrevious";
       },
       StatusCode::kUnsupported, "pre_tokenizer"},
      {"prefix space",
       [](json* j) { (*j)["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true; },
       StatusCode::kUnsupported, "add_prefix_space"},
      {"decoder",
       [](json* j) {
         (*j)["decoder"] = {{"type", "WordPiece"}};
       },
       StatusCode::kUnsupported, "decoder"},
      {"template",
       [](json* j) {
         (*j)["post_processor"] = {{"type", "TemplateProcessing"}};
       },
       StatusCode::kUnsupported, "post_processor"},
      {"lstrip", [](json* j) { (*j)["added_tokens"][0]["lstrip"] = true; },
       StatusCode::kUnsupported, "added_tokens[0]"},
  };
  for (const Case& c : cases) {
    json j = toy();
    c.edit(&j);
    const core::Status s = error_of(j);
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.field), std::string::npos) << c.what << ": " << s.to_string();
  }
}

TEST(TokenizerJson, MissingByteTokenIsAnError) {
  json j = toy();
  j["model"]["vocab"].erase(byte_level_from_bytes("\xFF"));
  const core::Status s = error_of(j);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("byte 255"), std::string::npos) << s.to_string();
}

TEST(TokenizerJson, ByteLevelAloneUsesTheGpt2Split) {
  json j = toy();
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}};
  auto tok = Tokenizer::from_json(j.dump());
  ASSERT_TRUE(tok) << tok.error().to_string();
  EXPECT_EQ(tok->encode("ab ab"), (std::vector<int32_t>{256, 257}));
}

TEST(TokenizerJson, MissingFileIsNotFound) {
  const auto r = Tokenizer::load_file("/nonexistent/dir/tokenizer.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace anchorage::text

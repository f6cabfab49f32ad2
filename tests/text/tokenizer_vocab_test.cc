// BpeVocab (the GGUF form of a vocabulary): the Qwen3 tokenizer.json written as GGUF arrays
// and read back encodes every text exactly as the tokenizer.json does; malformed vocabularies
// are errors naming the entry.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "qwen3_tokenizer_data.h"
#include "text/bpe_vocab.h"
#include "text/tokenizer.h"

namespace anchorage::text {
namespace {

TEST(TokenizerVocabTest, Qwen3RoundTripEncodesLikeTokenizerJson) {
  std::string error;
  const Tokenizer* json_tok = testing::qwen3_tokenizer(&error);
  ASSERT_NE(json_tok, nullptr) << error;
  std::ifstream in(testing::qwen3_data_path("tokenizer.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  auto spec = parse_tokenizer_json(ss.str());
  ASSERT_TRUE(spec.has_value());
  const BpeVocab v = vocab_from_spec(*spec, "qwen2", 151936);  // padded like the model's embedding
  ASSERT_EQ(v.tokens.size(), 151936u);
  EXPECT_EQ(v.tokens[151935], "[PAD151935]");
  EXPECT_EQ(v.token_types[151935], kBpeTokenUnused);
  EXPECT_EQ(v.tokens[151644], "<|im_start|>");
  EXPECT_EQ(v.token_types[151644], kBpeTokenControl);
  EXPECT_EQ(v.token_types[size_t(*json_tok->token_id("<think>"))], kBpeTokenUserDefined);
  EXPECT_EQ(v.tokens[220], "Ġ");  // the space, in the byte-level alphabet
  auto tok = Tokenizer::from_vocab(v);
  ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
  EXPECT_EQ(tok->vocab_size(), json_tok->vocab_size());
  for (const char* text :
       {"Hello, world!", "  leading spaces\n\n\ttabs", "<|im_start|>user\nHi<|im_end|>\n",
        "<think>\nreasoning\n</think>\n\n<tool_call>{\"a\": 1}</tool_call>",
        "数字 12345 and émigré cafe\u0301 (NFC)", "don't STOP'LL we've",
        "😀🙂 \xff\xfe bad bytes"}) {
    EXPECT_EQ(tok->encode(text), json_tok->encode(text)) << text;
  }
  EXPECT_TRUE(tok->is_special(151644));
  EXPECT_FALSE(tok->is_special(*tok->token_id("<think>")));
  EXPECT_TRUE(tok->is_added(*tok->token_id("<think>")));
}

TEST(TokenizerVocabTest, ErrorsNameTheEntry) {
  BpeVocab v;
  v.pre = "qwen2";
  v.tokens = {"a", "b", "ab"};
  v.merges = {"a b"};
  ASSERT_TRUE(spec_from_vocab(v).has_value());
  BpeVocab pre = v;
  pre.pre = "llama-bpe";
  auto p = spec_from_vocab(pre);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code(), core::StatusCode::kUnsupported);
  EXPECT_NE(p.error().message().find("llama-bpe"), std::string::npos);
  BpeVocab merge = v;
  merge.merges = {"a c"};
  auto m = spec_from_vocab(merge);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("merges[0]"), std::string::npos);
  BpeVocab types = v;
  types.token_types = {1, 1};
  EXPECT_FALSE(spec_from_vocab(types).has_value());
  types.token_types = {1, 6, 1};
  auto t = spec_from_vocab(types);
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("token_type[1]"), std::string::npos);
  BpeVocab piece = v;
  piece.tokens[1] = "a b";  // a raw space is not in the byte-level alphabet
  auto b = spec_from_vocab(piece);
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().message().find("tokens[1]"), std::string::npos);
}

TEST(TokenizerVocabTest, Qwen35PreTokenizerKeepsMarksInWords) {
  EXPECT_NE(pre_tokenizer_pattern("qwen35").find("\\p{M}"), std::string::npos);
  EXPECT_EQ(pre_tokenizer_pattern("qwen2").find("\\p{M}"), std::string::npos);
  EXPECT_EQ(pre_tokenizer_pattern("gpt-4o"), "");
}

}  // namespace
}  // namespace anchorage::text

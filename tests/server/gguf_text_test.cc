// gguf_tokenizer: the tokenizer of a GGUF file, read from the file's own arrays in place (no
// copy of its tokens or merges), encodes every text as the tokenizer.json it was written from;
// a missing or malformed key is an error naming it.
#include "server/gguf_text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/gguf/gguf_writer.h"
#include "model/gguf/mapped_file.h"
#include "text/bpe_vocab.h"
#include "text/qwen3_tokenizer_data.h"

namespace anchorage::server {
namespace {

using model::gguf::GgufFile;
using model::gguf::GgufType;
using model::gguf::GgufValue;
using model::gguf::GgufWriter;

// The Qwen3 vocabulary as tokenizer.ggml.* keys, less the keys named in `skip`.
GgufWriter vocabulary_writer(const std::string& skip = "") {
  std::ifstream in(text::testing::qwen3_data_path("tokenizer.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  auto spec = text::parse_tokenizer_json(ss.str());
  EXPECT_TRUE(spec.has_value());
  const text::BpeVocab v = text::vocab_from_spec(*spec, "qwen2", 151936);
  GgufWriter w;
  auto add = [&](const std::string& key, GgufValue value) {
    if (key != skip) w.add(key, std::move(value));
  };
  add("tokenizer.ggml.model", GgufValue::string("gpt2"));
  add("tokenizer.ggml.pre", GgufValue::string(v.pre));
  add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  add("tokenizer.ggml.token_type",
      GgufValue::int_array(GgufType::kI32,
                           std::vector<int64_t>(v.token_types.begin(), v.token_types.end())));
  add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  return w;
}

core::Result<GgufFile> parse(const GgufWriter& w) {
  return GgufFile::parse(model::gguf::MappedFile::from_bytes(w.serialize()));
}

TEST(GgufText, TheFilesTokenizerEncodesLikeTheTokenizerJson) {
  std::string error;
  const text::Tokenizer* json_tok = text::testing::qwen3_tokenizer(&error);
  ASSERT_NE(json_tok, nullptr) << error;
  auto file = parse(vocabulary_writer());
  ASSERT_TRUE(file.has_value()) << file.error().to_string();
  ASSERT_TRUE(gguf_has_tokenizer(*file));
  auto vocab = gguf_vocab(*file);
  ASSERT_TRUE(vocab.has_value()) << vocab.error().to_string();
  // In place: the tokens and merges are the file's own arrays.
  EXPECT_EQ(vocab->tokens, &file->find("tokenizer.ggml.tokens")->strings);
  EXPECT_EQ(vocab->merges, &file->find("tokenizer.ggml.merges")->strings);
  auto tok = gguf_tokenizer(*file);
  ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
  EXPECT_EQ(tok->vocab_size(), json_tok->vocab_size());
  for (const char* t : {"Hello, world!", "<|im_start|>user\nHi<|im_end|>\n",
                        "<think>\nx\n</think>\n\n<tool_call>{\"a\": 1}</tool_call>",
                        "数字 12345 and émigré cafe\u0301", "don't STOP'LL we've"}) {
    EXPECT_EQ(tok->encode(t), json_tok->encode(t)) << t;
  }
}

TEST(GgufText, AMissingOrMalformedKeyIsNamed) {
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"}) {
    auto file = parse(vocabulary_writer(key));
    ASSERT_TRUE(file.has_value());
    auto tok = gguf_tokenizer(*file);
    ASSERT_FALSE(tok.has_value()) << key;
    EXPECT_NE(tok.error().message().find(key), std::string::npos) << tok.error().to_string();
  }
  GgufWriter w = vocabulary_writer();
  w.add("tokenizer.ggml.merges", GgufValue::u32(7));
  auto file = parse(w);
  ASSERT_TRUE(file.has_value());
  auto tok = gguf_tokenizer(*file);
  ASSERT_FALSE(tok.has_value());
  EXPECT_NE(tok.error().message().find("not a string array"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::server

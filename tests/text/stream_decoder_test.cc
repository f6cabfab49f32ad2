// StreamDecoder: a character split across tokens is held back until it is whole, bytes that
// can no longer form one become U+FFFD at once, and flush() ends an incomplete one with U+FFFD.
#include "text/stream_decoder.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/qwen3_tokenizer_data.h"
#include "text/tokenizer.h"

namespace anchorage::text {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

class StreamDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    tok_ = testing::qwen3_tokenizer(&error);
    ASSERT_NE(tok_, nullptr) << error;
  }
  // The single-byte token of each byte of s.
  std::vector<int32_t> byte_tokens(const std::string& s) const {
    std::vector<int32_t> ids;
    for (char ch : s) ids.push_back(tok_->token_id(std::string(1, ch)).value());
    return ids;
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(StreamDecoderTest, EmojiSplitByteByByte) {
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
  StreamDecoder stream(*tok_);
  std::vector<std::string> pushed;
  for (int32_t id : byte_tokens("a" + emoji + "b")) {
    std::string out;
    stream.push(id, &out);
    pushed.push_back(out);
  }
  EXPECT_EQ(pushed, (std::vector<std::string>{"a", "", "", "", emoji, "b"}));
  std::string rest;
  stream.flush(&rest);
  EXPECT_EQ(rest, "");
}

TEST_F(StreamDecoderTest, EmojiSplitAcrossMultiByteTokens) {
  // The real encoding of two emoji: check each push is whole characters and the total is right.
  const std::string text = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD ok";  // U+1F44D U+1F3FD " ok"
  StreamDecoder stream(*tok_);
  std::string all;
  for (int32_t id : tok_->encode(text)) {
    std::string out;
    stream.push(id, &out);
    EXPECT_LE(stream.pending_bytes(), 3u);
    all += out;
  }
  stream.flush(&all);
  EXPECT_EQ(all, text);
}

TEST_F(StreamDecoderTest, IncompleteCharacterAtTheEndBecomesReplacement) {
  StreamDecoder stream(*tok_);
  std::string out;
  for (int32_t id : byte_tokens("x\xF0\x9F")) stream.push(id, &out);
  EXPECT_EQ(out, "x");
  EXPECT_EQ(stream.pending_bytes(), 2u);
  stream.flush(&out);
  EXPECT_EQ(out, std::string("x") + kReplacement);
  EXPECT_EQ(stream.pending_bytes(), 0u);
}

TEST_F(StreamDecoderTest, ImpossibleBytesAreReplacedAtOnce) {
  StreamDecoder stream(*tok_);
  std::string out;
  const std::vector<int32_t> ids = byte_tokens(
      "\xFF\xE2\x82"
      "A");
  stream.push(ids[0], &out);
  EXPECT_EQ(out, kReplacement);  // 0xFF never starts a character
  stream.push(ids[1], &out);
  stream.push(ids[2], &out);
  EXPECT_EQ(out, kReplacement);  // E2 82 may still become a euro sign
  stream.push(ids[3], &out);
  EXPECT_EQ(out, std::string(kReplacement) + kReplacement + "A");  // it did not
}

TEST_F(StreamDecoderTest, SkipsSpecialTokensWhenAsked) {
  StreamDecoder stream(*tok_, /*skip_special_tokens=*/true);
  std::string out;
  for (int32_t id : tok_->encode("<|im_start|>assistant\n<think>x</think><|im_end|>")) {
    stream.push(id, &out);
  }
  stream.flush(&out);
  EXPECT_EQ(out, "assistant\n<think>x</think>");  // <think> is not special
}

}  // namespace
}  // namespace anchorage::text

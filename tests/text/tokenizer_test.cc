// Tokenizer on the real Qwen3 tokenizer.json: sizes, special tokens, the empty string,
// ill-formed UTF-8 input (the behaviour tokenizer.h defines), out-of-range ids, the cache and
// concurrent use. The reference ids for ordinary text are in tokenizer_golden_test.cc.
#include "text/tokenizer.h"

#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "text/qwen3_tokenizer_data.h"
#include "text/utf8.h"

namespace anchorage::text {
namespace {

class Qwen3Tokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    tok_ = testing::qwen3_tokenizer(&error);
    ASSERT_NE(tok_, nullptr) << error;
  }
  int32_t byte_id(uint8_t b) const {
    const auto id = tok_->token_id(std::string(1, static_cast<char>(b)));
    EXPECT_TRUE(id.has_value());
    return id.value_or(-1);
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(Qwen3Tokenizer, VocabularySize) {
  // 151,643 BPE tokens (ids 0..151642) and 26 added tokens (151643..151668).
  EXPECT_EQ(tok_->vocab_size(), 151669);
  EXPECT_EQ(tok_->token_bytes(151642).empty(), false);
  EXPECT_TRUE(tok_->token_bytes(151669).empty());
}

TEST_F(Qwen3Tokenizer, SpecialAndAddedTokens) {
  EXPECT_EQ(tok_->token_id("<|endoftext|>"), 151643);
  EXPECT_EQ(tok_->token_id("<|im_start|>"), 151644);
  EXPECT_EQ(tok_->token_id("<|im_end|>"), 151645);
  EXPECT_EQ(tok_->token_id("<tool_call>"), 151657);
  EXPECT_EQ(tok_->token_id("</tool_call>"), 151658);
  EXPECT_EQ(tok_->token_id("<think>"), 151667);
  EXPECT_EQ(tok_->token_id("</think>"), 151668);
  EXPECT_FALSE(tok_->token_id("<|not_a_token|>").has_value());
  EXPECT_TRUE(tok_->is_special(151645));
  EXPECT_TRUE(tok_->is_added(151667));
  EXPECT_FALSE(tok_->is_special(151667));  // <think> is added but not special
  EXPECT_FALSE(tok_->is_added(9707));
  EXPECT_EQ(tok_->token_bytes(151645), "<|im_end|>");
  // A vocabulary piece by its raw bytes: "\n" is the byte-level 'Ċ', id 198.
  EXPECT_EQ(tok_->token_id("\n"), 198);
}

TEST_F(Qwen3Tokenizer, SpecialTokensAreCutBeforeTheSplit) {
  const std::vector<int32_t> ids = tok_->encode("<|im_start|>user\nhi<|im_end|>\n");
  EXPECT_EQ(ids, (std::vector<int32_t>{151644, 872, 198, 6023, 151645, 198}));
  EXPECT_EQ(tok_->decode(ids, /*skip_special_tokens=*/true), "user\nhi\n");
  // Not quite a special token: ordinary text.
  for (int32_t id : tok_->encode("<|im_start|")) EXPECT_LT(id, 151643);
}

TEST_F(Qwen3Tokenizer, EmptyString) {
  EXPECT_TRUE(tok_->encode("").empty());
  EXPECT_EQ(tok_->decode(std::vector<int32_t>{}), "");
}

TEST_F(Qwen3Tokenizer, IllFormedBytesBecomeSingleByteTokens) {
  EXPECT_EQ(tok_->encode("\xFF"), std::vector<int32_t>{byte_id(0xFF)});
  // A truncated euro sign (E2 82 of E2 82 AC): its two bytes, each alone.
  std::vector<int32_t> want = tok_->encode("a");
  want.push_back(byte_id(0xE2));
  want.push_back(byte_id(0x82));
  const std::vector<int32_t> b = tok_->encode("b");
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(tok_->encode("a\xE2\x82"
                         "b"),
            want);
  // The text around a bad byte is encoded as if the byte were a boundary.
  std::vector<int32_t> joined = tok_->encode("hello");
  joined.push_back(byte_id(0xC0));
  const std::vector<int32_t> world = tok_->encode(" world");
  joined.insert(joined.end(), world.begin(), world.end());
  EXPECT_EQ(tok_->encode("hello\xC0 world"), joined);
  // decode_bytes gives the input back; decode gives valid UTF-8 with U+FFFD.
  EXPECT_EQ(tok_->decode_bytes(tok_->encode("a\xFF"
                                            "b")),
            "a\xFF"
            "b");
  EXPECT_EQ(tok_->decode(tok_->encode("a\xFF"
                                      "b")),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(tok_->decode(tok_->encode("\xED\xA0\x80")), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(Qwen3Tokenizer, RandomBytesRoundTripAndNeverCrash) {
  std::mt19937 rng(7);
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 64, '\0');
    // Below 0xCC no lead byte starts a character that NFC could change, so the round trip
    // is exact; the bytes still make every kind of ill-formed sequence.
    for (char& ch : s) ch = static_cast<char>(rng() % 0xCC);
    const std::vector<int32_t> ids = tok_->encode(s);
    ASSERT_EQ(tok_->decode_bytes(ids), s) << "case " << n;
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok_->vocab_size());
  }
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 64, '\0');
    for (char& ch : s) ch = static_cast<char>(rng());
    const std::string text = tok_->decode(tok_->encode(s));
    ASSERT_TRUE(utf8_is_valid(text)) << "case " << n;
  }
}

TEST_F(Qwen3Tokenizer, IdsWithoutATokenDecodeToNothing) {
  // A model's embedding may be padded past the vocabulary; those ids and negative ones
  // decode to nothing instead of failing.
  EXPECT_EQ(tok_->decode(std::vector<int32_t>{9707, 151669, 200000, -1, 1879}), "Hello world");
}

TEST_F(Qwen3Tokenizer, CacheDoesNotChangeResults) {
  const std::string text = "the cache keeps the ids of the pieces the text repeats, the end";
  tok_->test_clear_cache();
  const std::vector<int32_t> cold = tok_->encode(text);
  EXPECT_GT(tok_->test_cache_size(), 0u);
  EXPECT_EQ(tok_->encode(text), cold);
}

TEST_F(Qwen3Tokenizer, ConcurrentEncodeAgrees) {
  const std::vector<std::string> texts = {"Hello world, 你好 😀", "def f(x):\n    return x\n",
                                          "<|im_start|>user\nhi<|im_end|>", "  spaces   "};
  std::vector<std::vector<int32_t>> want;
  for (const std::string& t : texts) want.push_back(tok_->encode(t));
  auto work = [&](bool* ok) {
    for (int r = 0; r < 300; ++r) {
      if (r % 50 == 0) tok_->test_clear_cache();
      for (size_t i = 0; i < texts.size(); ++i) {
        if (tok_->encode(texts[i]) != want[i]) *ok = false;
      }
    }
  };
  bool ok1 = true, ok2 = true;
  std::thread t1(work, &ok1), t2(work, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1 && ok2);
}

}  // namespace
}  // namespace anchorage::text

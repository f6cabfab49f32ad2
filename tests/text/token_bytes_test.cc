// TokenBytes (entries in one buffer), byte_level_decode, and what both tokenizer readers share
// (vocab_resolve.h): the index of a vocabulary's bytes and the merges resolved through it.
#include "text/token_bytes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/byte_level.h"
#include "text/utf8.h"
#include "text/vocab_resolve.h"

namespace anchorage::text {
namespace {

TEST(TokenBytes, EntriesInOrder) {
  TokenBytes t = {"ab", "", "c"};
  t.push_back_joined("de", "f");
  ASSERT_TRUE(t.push_back_byte_level("\xC4\xA0x"));  // "Ġx": a space then x
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0], "ab");
  EXPECT_EQ(t[1], "");
  EXPECT_EQ(t[2], "c");
  EXPECT_EQ(t[3], "def");
  EXPECT_EQ(t[4], " x");
  EXPECT_EQ(t.byte_size(), 8u);
  // Not byte-level (a character outside the alphabet, a stray continuation byte): nothing added.
  EXPECT_FALSE(t.push_back_byte_level("a b"));
  EXPECT_FALSE(t.push_back_byte_level("a\x80"));
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.byte_size(), 8u);
  t.resize(7);
  EXPECT_EQ(t[5], "");
  EXPECT_EQ(t[6], "");
  t.resize(2);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.byte_size(), 2u);
  t.push_back("zz");
  EXPECT_EQ(t[2], "zz");
}

TEST(TokenBytes, AMoveKeepsTheBytesInPlace) {
  TokenBytes t = {"a", "bc"};  // three bytes: a std::string would have kept them inline
  const char* before = t[1].data();
  TokenBytes moved = std::move(t);
  EXPECT_EQ(moved[1].data(), before);
  EXPECT_EQ(moved[1], "bc");
}

TEST(ByteLevel, DecodeInvertsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(char(b));
  const std::string piece = byte_level_from_bytes(all);
  std::string out(piece.size(), '\0');
  const size_t n = byte_level_decode(piece, out.data());
  ASSERT_EQ(n, all.size());
  out.resize(n);
  EXPECT_EQ(out, all);
  EXPECT_EQ(byte_level_decode("", out.data()), 0u);
  EXPECT_EQ(byte_level_decode(" ", out.data()), kNotByteLevel);  // 0x20 stands for U+0120
  EXPECT_EQ(byte_level_decode("\xE2\x82\xAC", out.data()), kNotByteLevel);  // U+20AC
  EXPECT_EQ(byte_level_decode("\xC4", out.data()), kNotByteLevel);          // cut short
}

// byte_level_decode against its definition: UTF-8 characters, each one of the alphabet's.
size_t decode_by_definition(std::string_view piece, std::string* out) {
  out->clear();
  for (size_t i = 0; i < piece.size();) {
    const Utf8Scan c = utf8_scan(piece, i);
    if (c.kind != Utf8Scan::kValid) return kNotByteLevel;
    const int b = byte_level_byte(c.cp);
    if (b < 0) return kNotByteLevel;
    out->push_back(char(b));
    i += c.n_bytes;
  }
  return out->size();
}

TEST(ByteLevel, DecodeIsItsDefinitionOnEveryShortPiece) {
  std::string expect, got(4, '\0');
  auto check = [&](const std::string& piece) {
    const size_t want = decode_by_definition(piece, &expect);
    const size_t n = byte_level_decode(piece, got.data());
    ASSERT_EQ(n, want) << std::hex << int(uint8_t(piece[0]));
    if (n != kNotByteLevel) {
      ASSERT_EQ(got.substr(0, n), expect);
    }
  };
  for (int x = 0; x < 256; ++x) {
    check(std::string(1, char(x)));
    for (int y = 0; y < 256; ++y) {
      check({char(x), char(y)});
      for (int z : {0x00, 0x41, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC4, 0xE0})
        check({char(x), char(y), char(z)});
    }
  }
}

TEST(VocabResolve, IndexSkipsNoSuchIdAndRefusesTwins) {
  const TokenBytes bytes = {"a", "", "bc", "d"};
  PieceIndex index;
  ASSERT_TRUE(index_token_bytes(bytes, "vocab", &index).is_ok());
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.find("a"), 0);
  EXPECT_EQ(index.find("bc"), 2);
  EXPECT_EQ(index.find("d"), 3);
  EXPECT_EQ(index.find(""), -1);

  const TokenBytes twins = {"a", "b", "a"};
  const core::Status s = index_token_bytes(twins, "vocab", &index);
  EXPECT_EQ(s.code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("vocab: ids 0 and 2 have the same bytes"), std::string::npos)
      << s.message();

  TokenBytes long_token = {"a"};
  long_token.push_back(std::string(PieceIndex::kMaxKeyBytes + 1, 'x'));
  const core::Status l = index_token_bytes(long_token, "vocab", &index);
  EXPECT_EQ(l.code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(l.message().find("vocab[1]: longer than 65535 bytes"), std::string::npos);
  // The longest a key may be goes in and is found; one byte more is simply not there.
  TokenBytes longest = {std::string(PieceIndex::kMaxKeyBytes, 'x')};
  ASSERT_TRUE(index_token_bytes(longest, "vocab", &index).is_ok());
  EXPECT_EQ(index.find(longest[0]), 0);
  EXPECT_EQ(index.find(std::string(PieceIndex::kMaxKeyBytes + 1, 'x')), -1);
}

TEST(VocabResolve, MergesByTheirRawBytes) {
  const TokenBytes bytes = {"a", " ", "a ", "\n"};
  PieceIndex index;
  ASSERT_TRUE(index_token_bytes(bytes, "vocab", &index).is_ok());
  TokenBytes halves;
  push_merge_half("a", &halves);
  push_merge_half("\xC4\xA0", &halves);  // Ġ: the space
  push_merge_half("\xC4\x8A", &halves);  // Ċ: the newline
  push_merge_half("a\xC4\xA0", &halves);
  std::vector<std::pair<int32_t, int32_t>> merges;
  ASSERT_TRUE(resolve_merges(halves, index, "merges", &merges).is_ok());
  EXPECT_EQ(merges, (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {3, 2}}));

  // A half outside the alphabet, or not a token: the merge's rank is named.
  for (const char* bad : {"a b", "b"}) {
    TokenBytes h;
    push_merge_half("a", &h);
    push_merge_half("a", &h);
    push_merge_half("a", &h);
    push_merge_half(bad, &h);
    const core::Status s = resolve_merges(h, index, "merges", &merges);
    EXPECT_EQ(s.code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("merges[1]: token not in the vocabulary"), std::string::npos)
        << bad << ": " << s.message();
  }
}

}  // namespace
}  // namespace anchorage::text

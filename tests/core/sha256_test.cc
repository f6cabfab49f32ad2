// Sha256 against the FIPS 180-4 / NIST CSRC example vectors.
#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace anchorage::core {
namespace {

TEST(Sha256, NistVectors) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShotAndFinishStartsOver) {
  Sha256 h;
  h.update("a");
  h.update("");
  h.update("bc");
  EXPECT_EQ(h.finish(), sha256("abc"));
  h.update("abd");
  EXPECT_NE(h.finish(), sha256("abc"));
}

}  // namespace
}  // namespace anchorage::core

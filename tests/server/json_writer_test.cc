// write_json: the same text as nlohmann's dump() for everything but floats (shortest
// round-trip) and invalid UTF-8 (U+FFFD per maximal subpart).
#include "server/json_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace anchorage::server {
namespace {

using Json = nlohmann::ordered_json;

TEST(JsonWriter, MatchesNlohmannOnIntegersStringsAndStructure) {
  const Json j = Json::parse(R"({"z": 1, "a": [true, false, null, -5, 18446744073709551615],
    "s": "quote\" back\\ nl\n tab\t ctl\u0001 del\u007f é 日本 😀", "o": {}, "e": []})");
  EXPECT_EQ(write_json(j), j.dump());
}

TEST(JsonWriter, FloatsAreShortestRoundTrip) {
  EXPECT_EQ(write_json(Json(-11.45282)), "-11.45282");  // nlohmann: -11.452819999999999
  EXPECT_EQ(write_json(Json(0.1)), "0.1");
  EXPECT_EQ(write_json(Json(3.0)), "3.0");
  EXPECT_EQ(write_json(Json(-0.0)), "-0.0");
  EXPECT_EQ(write_json(Json(1e300)), "1e+300");
  EXPECT_EQ(write_json(Json(std::nan(""))), "null");
  for (double d : {1.0 / 3.0, -2.718281828459045, 6.02214076e23, 5e-324}) {
    EXPECT_EQ(std::strtod(write_json(Json(d)).c_str(), nullptr), d);
  }
}

TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(write_json(Json(std::string("a\xe2\x82"))), "\"a\xef\xbf\xbd\"");
  EXPECT_EQ(write_json(Json(std::string("\xff\xfe"))), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  Json o = Json::object();
  o[std::string("k\xc3")] = 1;
  EXPECT_EQ(write_json(o), "{\"k\xef\xbf\xbd\":1}");
}

}  // namespace
}  // namespace anchorage::server

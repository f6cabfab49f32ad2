// dump_python_json must print what CPython's json.dumps(ensure_ascii=False) prints. The expected
// strings below were printed by CPython 3.11 (`json.dumps(v)`); the template golden file covers
// the same rules again through whole tool schemas.
#include "text/python_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace anchorage::text {
namespace {

using Json = nlohmann::ordered_json;

struct FloatCase {
  double value;
  const char* python;
};

TEST(PythonJson, FloatsPrintAsPythonRepr) {
  const FloatCase cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {-1.0, "-1.0"},
      {0.1, "0.1"},
      {0.5, "0.5"},
      {1.5, "1.5"},
      {100.0, "100.0"},
      {1e15, "1000000000000000.0"},
      {1e16, "1e+16"},
      {123456789012345.6, "123456789012345.6"},
      {1234567890123456.8, "1234567890123456.8"},
      {0.0001, "0.0001"},
      {1e-05, "1e-05"},
      {0.00012345, "0.00012345"},
      {1e-07, "1e-07"},
      {1e+22, "1e+22"},
      {1e+100, "1e+100"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {0.30000000000000004, "0.30000000000000004"},
      {3.141592653589793, "3.141592653589793"},
      {-2.5e-05, "-2.5e-05"},
      {9007199254740992.0, "9007199254740992.0"},
      {123456780000000.0, "123456780000000.0"},
  };
  for (const FloatCase& c : cases) {
    EXPECT_EQ(dump_python_json(Json(c.value)), c.python) << "python repr " << c.python;
  }
}

TEST(PythonJson, NonFiniteFloatsAsPython) {
  EXPECT_EQ(dump_python_json(Json(std::numeric_limits<double>::infinity())), "Infinity");
  EXPECT_EQ(dump_python_json(Json(-std::numeric_limits<double>::infinity())), "-Infinity");
  EXPECT_EQ(dump_python_json(Json(std::numeric_limits<double>::quiet_NaN())), "NaN");
}

TEST(PythonJson, StringsEscapeLikeEncodeBasestring) {
  // Python: json.dumps("\x00\x01\x1f\x7f\"\\/\b\f\n\r\t é 🚀 \u2028", ensure_ascii=False)
  static const char kIn[] =
      "\x00\x01\x1f\x7f\"\\/\b\f\n\r\t \xc3\xa9 \xf0\x9f\x9a\x80 \xe2\x80\xa8";
  const std::string in(kIn, sizeof(kIn) - 1);
  const std::string want =
      "\"\\u0000\\u0001\\u001f\x7f\\\"\\\\/\\b\\f\\n\\r\\t \xc3\xa9 \xf0\x9f\x9a\x80 "
      "\xe2\x80\xa8\"";
  EXPECT_EQ(dump_python_json(Json(in)), want);
}

TEST(PythonJson, ContainersUseDefaultSeparatorsAndKeepKeyOrder) {
  const Json v = Json::parse(
      R"({"b": "x", "a": [true, false, null, [], {}], "n": [-9223372036854775808, 18446744073709551615, -0, 7]})");
  EXPECT_EQ(dump_python_json(v),
            R"({"b": "x", "a": [true, false, null, [], {}], "n": [-9223372036854775808, )"
            R"(18446744073709551615, 0, 7]})");
}

TEST(PythonJson, KeyOrderIsInsertionOrderNotSorted) {
  Json v = Json::object();
  v["zeta"] = 1;
  v["alpha"] = Json::object({{"y", 2}, {"x", 3}});
  EXPECT_EQ(dump_python_json(v), R"({"zeta": 1, "alpha": {"y": 2, "x": 3}})");
}

TEST(PythonJson, AppendsToExistingText) {
  std::string out = "prefix ";
  append_python_json(Json::array({1, "a"}), &out);
  EXPECT_EQ(out, R"(prefix [1, "a"])");
}

TEST(PythonJson, IntegerExtremes) {
  EXPECT_EQ(dump_python_json(Json(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(dump_python_json(Json(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
}

}  // namespace
}  // namespace anchorage::text

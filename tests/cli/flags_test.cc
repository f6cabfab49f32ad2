#include "cli/flags.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace anchorage::cli {
namespace {

TEST(Flags, ParsesWholeNumbersOnly) {
  int64_t i = 0;
  EXPECT_TRUE(parse_int("-42", &i));
  EXPECT_EQ(i, -42);
  EXPECT_FALSE(parse_int("", &i));
  EXPECT_FALSE(parse_int("12x", &i));
  EXPECT_FALSE(parse_int(" 1", &i));
  EXPECT_FALSE(parse_int("99999999999999999999", &i));
  uint64_t u = 0;
  EXPECT_TRUE(parse_uint("18446744073709551615", &u));
  EXPECT_FALSE(parse_uint("-1", &u));
  double d = 0;
  EXPECT_TRUE(parse_double("0.25", &d));
  EXPECT_EQ(d, 0.25);
  EXPECT_TRUE(parse_double("1e-3", &d));
  EXPECT_FALSE(parse_double("0.5.", &d));
  EXPECT_FALSE(parse_double("inf", &d));
  EXPECT_FALSE(parse_double("nan", &d));
}

TEST(Flags, ParsesIdLists) {
  std::vector<int32_t> ids;
  EXPECT_TRUE(parse_int_list("1,2,3", &ids));
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(parse_int_list("7", &ids));
  EXPECT_EQ(ids, (std::vector<int32_t>{7}));
  EXPECT_FALSE(parse_int_list("", &ids));
  EXPECT_FALSE(parse_int_list("1,,2", &ids));
  EXPECT_FALSE(parse_int_list("1,2,", &ids));
  EXPECT_FALSE(parse_int_list("1,a", &ids));
  EXPECT_FALSE(parse_int_list("4294967296", &ids));
}

struct Parsed {
  int64_t n = 5;
  double x = 0.5;
  std::string s = "small";
  bool on = false;
  FlagSet flags;
  Parsed() {
    flags.add_int("n", &n, "a count");
    flags.add_double("x", &x, "a fraction");
    flags.add_string("s", &s, "a name");
    flags.add_bool("on", &on, "a switch");
  }
};

TEST(Flags, ParsesBothFormsAndRefusesBadInput) {
  Parsed p;
  bool help = false;
  ASSERT_TRUE(p.flags.parse({"--n", "7", "--x=0.125", "--s", "tiny", "--on"}, &help).is_ok());
  EXPECT_FALSE(help);
  EXPECT_EQ(p.n, 7);
  EXPECT_EQ(p.x, 0.125);
  EXPECT_EQ(p.s, "tiny");
  EXPECT_TRUE(p.on);

  auto err = [&](std::vector<std::string_view> args) {
    core::Status s = p.flags.parse(args, &help);
    return s.is_ok() ? std::string() : s.message();
  };
  EXPECT_NE(err({"--n", "seven"}).find("--n"), std::string::npos);
  EXPECT_NE(err({"--n"}).find("needs a value"), std::string::npos);
  EXPECT_NE(err({"--bogus", "1"}).find("unknown flag"), std::string::npos);
  EXPECT_NE(err({"stray"}).find("unexpected"), std::string::npos);
  EXPECT_NE(err({"--on=maybe"}).find("--on"), std::string::npos);
  ASSERT_TRUE(p.flags.parse({"--n", "1", "--help", "--bogus"}, &help).is_ok());
  EXPECT_TRUE(help);
}

TEST(Flags, ASwitchTakesAnOptionalBooleanWord) {
  Parsed p;
  bool help = false;
  ASSERT_TRUE(p.flags.parse({"--on=off"}, &help).is_ok());
  EXPECT_FALSE(p.on);
  ASSERT_TRUE(p.flags.parse({"--on", "yes"}, &help).is_ok());
  EXPECT_TRUE(p.on);
  ASSERT_TRUE(p.flags.parse({"--on", "0", "--n", "3"}, &help).is_ok());
  EXPECT_FALSE(p.on);
  EXPECT_EQ(p.n, 3);
  // A following word that is not boolean is not taken: here it is the next flag.
  ASSERT_TRUE(p.flags.parse({"--on=false", "--on", "--n", "4"}, &help).is_ok());
  EXPECT_TRUE(p.on);
  EXPECT_EQ(p.n, 4);
  EXPECT_FALSE(p.flags.parse({"--on", "stray"}, &help).is_ok());
}

TEST(Flags, HelpListsEveryFlagWithItsDefault) {
  Parsed p;
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  p.flags.print_help(f);
  std::fclose(f);
  std::string help(buf, len);
  free(buf);
  EXPECT_NE(help.find("--n <v>"), std::string::npos);
  EXPECT_NE(help.find("(default: 5)"), std::string::npos);
  EXPECT_NE(help.find("(default: 0.5)"), std::string::npos);
  EXPECT_NE(help.find("(default: small)"), std::string::npos);
  EXPECT_NE(help.find("--on "), std::string::npos);
  EXPECT_NE(help.find("(default: off)"), std::string::npos);
}

// llama.cpp's spellings: a short alias takes the next argument, a long one also `=value`;
// both set the same flag, --help lists them, and an alias of one flag is not another's.
TEST(Flags, AliasesSetTheSameFlag) {
  Parsed p;
  p.flags.add_alias("n", "-k");
  p.flags.add_alias("n", "--count");
  p.flags.add_alias("on", "-o");
  bool help = false;
  ASSERT_TRUE(p.flags.parse({"-k", "9"}, &help).is_ok());
  EXPECT_EQ(p.n, 9);
  ASSERT_TRUE(p.flags.parse({"--count=11", "-o"}, &help).is_ok());
  EXPECT_EQ(p.n, 11);
  EXPECT_TRUE(p.on);
  ASSERT_TRUE(p.flags.parse({"-k", "-3"}, &help).is_ok());  // a negative value, not a flag
  EXPECT_EQ(p.n, -3);
  EXPECT_FALSE(p.flags.parse({"-x", "1"}, &help).is_ok());
  EXPECT_FALSE(p.flags.parse({"--k", "1"}, &help).is_ok());  // -k is short only
  EXPECT_FALSE(p.flags.parse({"-count", "1"}, &help).is_ok());
  const core::Status s = p.flags.parse({"-k", "seven"}, &help);
  EXPECT_NE(s.message().find("--n"), std::string::npos);  // named by its flag

  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  p.flags.print_help(f);
  std::fclose(f);
  std::string help_text(buf, len);
  free(buf);
  EXPECT_NE(help_text.find("-k, --count, --n <v>"), std::string::npos);
  EXPECT_NE(help_text.find("-o, --on "), std::string::npos);
  // The environment's names are the flags' own, never an alias.
  EXPECT_EQ(p.flags.names(), (std::vector<std::string>{"n", "x", "s", "on"}));
}

}  // namespace
}  // namespace anchorage::cli

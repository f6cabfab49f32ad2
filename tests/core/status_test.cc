// core::Status reason codes, Result's refusal of an OK status, ignore_status's count
// (issue 17 §4), and log lines of any length.
#include "core/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/log.h"

namespace anchorage::core {
namespace {

TEST(Status, ACorruptionCarriesItsReasonThroughAPrefix) {
  const Status s = Status::corruption(Reason::kSectionCrc, "section 2");
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.reason(), Reason::kSectionCrc);
  const Status p = s.with_prefix("/cache/a.chunk: ");
  EXPECT_EQ(p.code(), StatusCode::kCorruption);
  EXPECT_EQ(p.reason(), Reason::kSectionCrc);
  EXPECT_EQ(p.message(), "/cache/a.chunk: section 2");
  EXPECT_EQ(p.to_string(), "Corruption (section_crc): /cache/a.chunk: section 2");
  EXPECT_EQ(Status::corruption("x").reason(), Reason::kNone);
  EXPECT_EQ(Status::corruption("x").to_string(), "Corruption: x");
}

TEST(Status, EveryReasonHasItsOwnName) {
  std::set<std::string> names;
  for (Reason r : kAllReasons) {
    const std::string n = reason_name(r);
    EXPECT_NE(n, "none");
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_EQ(names.size(), std::size(kAllReasons));
  EXPECT_TRUE(names.count("torn_tail"));
  EXPECT_TRUE(names.count("bad_magic"));
}

TEST(Status, IgnoredFailuresAreCountedAndOkIsNot) {
  const int64_t before = ignored_status_count();
  ignore_status(Status::ok(), "a step that worked");
  EXPECT_EQ(ignored_status_count(), before);
  ignore_status(Status::io_error("disk full"), "a cache put");
  EXPECT_EQ(ignored_status_count(), before + 1);
}

TEST(StatusDeathTest, AResultRefusesAnOkStatus) {
  EXPECT_DEATH({ Result<int> r(Status::ok()); }, "Result constructed from an OK status");
}

TEST(Log, ALongLineIsWrittenWhole) {
  const std::string word(5000, 'x');
  ::testing::internal::CaptureStderr();
  log(LogLevel::kWarn, "start %s end", word.c_str());
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("start " + word + " end\n"), std::string::npos);
}

TEST(Log, DebugLinesAppearOnlyAtTheDebugLevel) {
  const LogLevel before = log_level();
  int evaluated = 0;
  auto arg = [&evaluated] { return ++evaluated; };
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  ANCHORAGE_LOG_DEBUG("hidden %d", arg());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(evaluated, 0);  // not even formatted
  set_log_level(LogLevel::kDebug);
  ::testing::internal::CaptureStderr();
  ANCHORAGE_LOG_DEBUG("shown %d", arg());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find(" D shown 1\n"), std::string::npos);
  set_log_level(before);
  EXPECT_EQ(parse_log_level("debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_FALSE(parse_log_level("loud").has_value());
}

}  // namespace
}  // namespace anchorage::core

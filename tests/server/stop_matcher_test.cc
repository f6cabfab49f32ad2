// StopMatcher: stop strings found across piece boundaries, partial matches held back and
// released, the earliest match winning.
#include "server/stop_matcher.h"

#include <gtest/gtest.h>

namespace anchorage::server {
namespace {

// Feeds the pieces and returns what came out, and whether it matched.
std::pair<std::string, bool> run(std::vector<std::string> stops,
                                 const std::vector<std::string>& pieces) {
  StopMatcher m(std::move(stops));
  std::string out;
  for (const auto& p : pieces) m.feed(p, &out);
  m.flush(&out);
  return {out, m.matched()};
}

TEST(StopMatcher, NoStopsPassesEverything) {
  EXPECT_EQ(run({}, {"ab", "cd"}), std::make_pair(std::string("abcd"), false));
}

TEST(StopMatcher, MatchInsideOnePiece) {
  EXPECT_EQ(run({"END"}, {"hello END world"}), std::make_pair(std::string("hello "), true));
}

TEST(StopMatcher, MatchAcrossPiecesAtEverySplit) {
  const std::string text = "abc<|stop|>def";
  for (size_t i = 0; i <= text.size(); ++i) {
    for (size_t j = i; j <= text.size(); ++j) {
      auto r = run({"<|stop|>"}, {text.substr(0, i), text.substr(i, j - i), text.substr(j)});
      EXPECT_EQ(r.first, "abc") << i << "," << j;
      EXPECT_TRUE(r.second);
    }
  }
}

TEST(StopMatcher, HoldsBackOnlyWhatMayStillMatch) {
  StopMatcher m({"STOP"});
  std::string out;
  m.feed("xxST", &out);
  EXPECT_EQ(out, "xx");  // "ST" may start STOP
  m.feed("AR", &out);
  EXPECT_EQ(out, "xxSTAR");  // it did not
  m.feed("S", &out);
  EXPECT_EQ(out, "xxSTAR");
  m.flush(&out);
  EXPECT_EQ(out, "xxSTARS");
  EXPECT_FALSE(m.matched());
}

TEST(StopMatcher, EarliestStopWinsAndNothingFollows) {
  auto r = run({"world", "lo w"}, {"hello world"});
  EXPECT_EQ(r.first, "hel");
  StopMatcher m({"x"});
  std::string out;
  m.feed("axb", &out);
  m.feed("more", &out);
  m.flush(&out);
  EXPECT_EQ(out, "a");
}

TEST(StopMatcher, MultiByteCharactersStayWhole) {
  // "é" is 2 bytes; the stop string starts with it, so only whole characters are released.
  auto r = run({"éz"}, {"caf\xc3\xa9", "!"});
  EXPECT_EQ(r.first, "caf\xc3\xa9!");
  r = run({"éz"}, {"caf\xc3\xa9", "z"});
  EXPECT_EQ(r.first, "caf");
}

}  // namespace
}  // namespace anchorage::server

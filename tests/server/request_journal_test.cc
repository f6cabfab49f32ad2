// RequestJournal and its summary (issue 12 §3): a line per request with counts only, new tokens
// measured against what the session's previous request forwarded, a reason when a follow-up
// re-read more, 0600, rotation; and over HTTP, a conversation's follow-ups re-read only their
// new tokens under the default (exact) policy.
#include "server/request_journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server/journal_summary.h"
#include "server_harness.h"

namespace anchorage::server::testing {
namespace {

std::string temp_dir() {
  std::string t = ::testing::TempDir() + "journal_XXXXXX";
  char* d = ::mkdtemp(t.data());
  EXPECT_NE(d, nullptr);
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

JobOutcome outcome(int64_t prompt, int64_t cached, int64_t generated) {
  JobOutcome o;
  o.prompt_tokens = prompt;
  o.cached_tokens = cached;
  o.reread_tokens = prompt - cached;
  o.completion_tokens = generated;
  o.cache.source = cached > 0 ? cache::ResumeSource::kEnd : cache::ResumeSource::kCold;
  o.end = JobEnd::kStopToken;
  return o;
}

TEST(RequestJournal, NewTokensReasonsAndRotation) {
  const std::string dir = temp_dir();
  JournalOptions o;
  o.path = dir + "/journal.jsonl";
  auto j = RequestJournal::open(o);
  ASSERT_TRUE(j) << j.error().to_string();
  GenerationJob job;
  job.request_id = 7;
  job.session = SessionKey{SessionKey::Source::kHeader, "conversation", {}};
  job.prompt = {1, 2, 3, 4, 5};
  JournalEntry first = (*j)->record(job, std::vector<int32_t>{6, 7, 8}, outcome(5, 0, 3));
  EXPECT_EQ(first.new_tokens, 5);
  EXPECT_EQ(first.reason, JournalEntry::Reason::kNone);

  // The answer sent back (its last sampled token, 8, was never forwarded) and two more.
  job.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  JournalEntry clean = (*j)->record(job, std::vector<int32_t>{11}, outcome(10, 7, 1));
  EXPECT_EQ(clean.new_tokens, 3);  // 8, 9, 10
  EXPECT_EQ(clean.reread, 3);
  EXPECT_EQ(clean.reason, JournalEntry::Reason::kNone);

  // The answer re-tokenized: the copy parts inside it, and the resume was lower.
  job.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13};
  JournalEntry parted = (*j)->record(job, std::vector<int32_t>{14}, outcome(11, 5, 1));
  EXPECT_EQ(parted.new_tokens, 2);
  EXPECT_EQ(parted.parted_at, 9);
  EXPECT_EQ(parted.reason, JournalEntry::Reason::kPromptChanged);  // 9 < the previous prompt

  // Parted inside the answer (12 and 13 forwarded, the copy has 12, 15): retokenized; the
  // same when the echo anchor planned for it was dropped says so.
  job.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16};
  (*j)->record(job, std::vector<int32_t>{17, 18, 19}, outcome(14, 11, 3));
  job.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 20};
  JournalEntry retok = (*j)->record(job, std::vector<int32_t>{21}, outcome(16, 14, 1));
  EXPECT_EQ(retok.reason, JournalEntry::Reason::kRetokenized);
  job.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 20, 22, 23};
  (*j)->record(job, std::vector<int32_t>{24, 25, 26}, outcome(18, 17, 3));
  job.prompt.insert(job.prompt.end(), {24, 27, 28});  // parts at 19, inside the answer
  JobOutcome late = outcome(21, 18, 1);
  late.cache.echo_dropped = true;
  JournalEntry echo = (*j)->record(job, std::vector<int32_t>{29}, late);
  EXPECT_EQ(echo.parted_at, 19);
  EXPECT_EQ(echo.reason, JournalEntry::Reason::kEchoNotTaken);

  GenerationJob anonymous;
  anonymous.prompt = {1, 2};
  (*j)->record(anonymous, std::vector<int32_t>{3}, outcome(2, 0, 1));

  const std::string text = read_file(o.path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8);
  EXPECT_NE(text.find("\"reason\":\"echo_not_taken\""), std::string::npos);
  EXPECT_NE(text.find("\"session\":null"), std::string::npos);
  EXPECT_NE(text.find("\"reason\":\"prompt_changed\""), std::string::npos);
  EXPECT_EQ(text.find("conversation"), std::string::npos);  // the key is never written
  struct stat st {};
  ASSERT_EQ(::stat(o.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const JournalSummary s = summarize_journal(text + "not json\n");
  EXPECT_EQ(s.lines, 9);
  EXPECT_EQ(s.bad_lines, 1);
  ASSERT_EQ(s.sessions.size(), 2u);
  EXPECT_EQ(s.sessions[0].requests, 7);
  EXPECT_EQ(s.sessions[0].follow_ups, 6);
  EXPECT_EQ(s.sessions[0].clean_follow_ups, 3);
  EXPECT_EQ(s.sessions[0].reread_beyond_new, 6);
  EXPECT_EQ(s.sessions[1].session, "no session");

  // Rotation: a cap below two lines moves the file to .1 and starts a new one.
  JournalOptions small = o;
  small.path = dir + "/small.jsonl";
  small.max_bytes = 300;
  auto r = RequestJournal::open(small);
  ASSERT_TRUE(r);
  for (int i = 0; i < 3; ++i) (*r)->record(anonymous, std::vector<int32_t>{3}, outcome(2, 0, 1));
  EXPECT_TRUE(std::filesystem::exists(small.path + ".1"));
  EXPECT_LT(std::filesystem::file_size(small.path), 300u);
  EXPECT_EQ((*r)->write_errors(), 0);
  std::filesystem::remove_all(dir);
}

TEST(RequestJournal, AnUnwritablePathFailsTheBind) {
  ServerOptions o;
  o.journal.path = "/nonexistent-dir/journal.jsonl";
  ServedModel* model = shared_model();
  ASSERT_NE(model, nullptr);
  HttpServer server(o, *model);
  const core::Status s = server.bind();
  EXPECT_FALSE(s.is_ok());
}

// A conversation over HTTP under the defaults: every follow-up re-reads only its new tokens.
TEST(RequestJournal, FollowUpsReReadOnlyTheirNewTokens) {
  const std::string dir = temp_dir();
  ServerOptions o;
  o.journal.path = dir + "/journal.jsonl";
  {
    ServerHarness h(o);
    ASSERT_TRUE(h.ok());
    Json messages = Json::array({Json{{"role", "system"}, {"content", "Answer in one line."}},
                                 Json{{"role", "user"}, {"content", "alpha bravo delta"}}});
    for (int t = 0; t < 4; ++t) {
      Json body = {{"messages", messages},
                   {"max_tokens", 8},
                   {"temperature", 0},
                   {"prompt_cache_key", "journal-test"}};
      auto r = h.post("/v1/chat/completions", body.dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      const Json j = parse_json(r->body);
      messages.push_back(
          Json{{"role", "assistant"}, {"content", j["choices"][0]["message"]["content"]}});
      messages.push_back(Json{{"role", "user"}, {"content", "kilo lima " + std::to_string(t)}});
    }
  }
  const JournalSummary s = summarize_journal(read_file(o.journal.path));
  ASSERT_EQ(s.sessions.size(), 1u);
  EXPECT_EQ(s.sessions[0].requests, 4);
  EXPECT_EQ(s.sessions[0].follow_ups, 3);
  EXPECT_EQ(s.sessions[0].not_exact, 0);
  // Re-tokenized answers may cost a few tokens each (the anchor below where the copy parts);
  // the journal says where and why, and nothing else re-reads.
  EXPECT_LE(s.sessions[0].reread_beyond_new, 3 * 8);
  EXPECT_LT(s.sessions[0].reread, s.sessions[0].prompt_tokens / 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anchorage::server::testing

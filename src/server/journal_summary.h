// JournalSummary: a request journal (request_journal.h) read back, one row per session — what
// `anchorage journal FILE` prints. Lines that are not journal entries are counted and skipped.
//
// Thread safety: plain functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anchorage::server {

struct SessionSummary {
  std::string session;  // the hash as written, or "no session"
  int64_t requests = 0;
  int64_t follow_ups = 0;        // requests after the session's first
  int64_t clean_follow_ups = 0;  // follow-ups that re-read no more than their new tokens
  int64_t prompt_tokens = 0;
  int64_t cached = 0;
  int64_t reread = 0;
  int64_t new_tokens = 0;
  int64_t reread_beyond_new = 0;  // follow-ups' re-read tokens beyond their new tokens
  int64_t not_exact = 0;
  int64_t served_rows = 0;
  int64_t generated = 0;
};

struct JournalSummary {
  std::vector<SessionSummary> sessions;  // in order of first appearance
  int64_t lines = 0;
  int64_t bad_lines = 0;
};

JournalSummary summarize_journal(std::string_view text);
// The table `anchorage journal` prints.
std::string format_journal_summary(const JournalSummary& s);

}  // namespace anchorage::server

#include "server/request_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "core/clock.h"
#include "core/log.h"
#include "core/token_prefix.h"

namespace anchorage::server {

using core::common_prefix;
namespace {

int open_append(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

}  // namespace

const char* reason_name(JournalEntry::Reason r) {
  switch (r) {
    case JournalEntry::Reason::kNone:
      return "none";
    case JournalEntry::Reason::kPromptChanged:
      return "prompt_changed";
    case JournalEntry::Reason::kRetokenized:
      return "retokenized";
    case JournalEntry::Reason::kEchoNotTaken:
      return "echo_not_taken";
    case JournalEntry::Reason::kNoAnchor:
      return "no_anchor";
  }
  return "none";
}

std::string journal_line(const JournalEntry& e) {
  char session[24] = "null";
  if (e.session) std::snprintf(session, sizeof(session), "\"%016" PRIx64 "\"", *e.session);
  const CacheSplit& c = e.cache;
  char buf[768];
  int n = std::snprintf(
      buf, sizeof(buf),
      "{\"time_ms\":%" PRId64 ",\"request\":\"%016" PRIx64
      "\",\"session\":%s,"
      "\"prompt_tokens\":%" PRId64 ",\"client_prompt_tokens\":%" PRId64 ",\"cached\":%" PRId64
      ",\"reread\":%" PRId64 ",\"new_tokens\":%" PRId64
      ",\"tier\":\"%.*s\",\"source\":\"%.*s\",\"exact\":%s,\"served\":\"%.*s\","
      "\"ttft_ms\":%" PRId64 ",\"total_ms\":%" PRId64 ",\"generated\":%" PRId64 ",\"end\":\"%s\"",
      e.time_ms, e.request_id, session, e.prompt_tokens, e.client_prompt_tokens, e.cached, e.reread,
      e.new_tokens, int(c.tier().size()), c.tier().data(), int(cache::name(c.source).size()),
      cache::name(c.source).data(), c.exact ? "true" : "false", int(c.served_name().size()),
      c.served_name().data(), e.ttft_ms, e.total_ms, e.generated, e.end);
  std::string line(buf, size_t(std::min<int>(n, int(sizeof(buf)) - 1)));
  if (e.reason != JournalEntry::Reason::kNone) {
    n = std::snprintf(buf, sizeof(buf), ",\"parted_at\":%" PRId64 ",\"reason\":\"%s\"", e.parted_at,
                      reason_name(e.reason));
    line.append(buf, size_t(std::min<int>(n, int(sizeof(buf)) - 1)));
  }
  line += "}";
  return line;
}

core::Result<std::unique_ptr<RequestJournal>> RequestJournal::open(const JournalOptions& options) {
  const int fd = open_append(options.path);
  if (fd < 0)
    return core::Status::io_error("journal: cannot open " + options.path + ": " +
                                  std::strerror(errno));
  ::fchmod(fd, 0600);  // an older file keeps its mode otherwise
  return std::unique_ptr<RequestJournal>(new RequestJournal(options, fd));
}

RequestJournal::RequestJournal(const JournalOptions& options, int fd) : options_(options), fd_(fd) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0) bytes_ = int64_t(st.st_size);
}

RequestJournal::~RequestJournal() {
  if (fd_ >= 0) ::close(fd_);
}

int64_t RequestJournal::write_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

JournalEntry RequestJournal::record(const GenerationJob& job, std::span<const int32_t> sampled,
                                    const JobOutcome& out) {
  JournalEntry e;
  e.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  e.request_id = job.request_id;
  if (!job.session.empty()) e.session = job.session.hash();
  e.prompt_tokens = out.prompt_tokens;
  e.client_prompt_tokens = int64_t(job.prompt.size());
  e.cached = out.cached_tokens;
  e.reread = out.reread_tokens;
  e.cache = out.cache;
  e.ttft_ms = out.first_token_ns / 1'000'000;
  e.total_ms = (core::now_ns() - job.submitted_ns) / 1'000'000;
  e.generated = out.completion_tokens;
  e.end = job_end_name(out.end);
  e.new_tokens = e.client_prompt_tokens;

  std::lock_guard<std::mutex> lock(mu_);
  if (e.session) {
    // The session's earlier request this one continues: the one sharing the longest prefix
    // (a client sends title and summary requests under the conversation's key too).
    auto best = history_.end();
    int64_t parted = -1;
    for (auto it = history_.begin(); it != history_.end(); ++it) {
      if (it->session != *e.session) continue;
      const int64_t c = common_prefix(job.prompt, it->tokens);
      if (c > parted) {
        parted = c;
        best = it;
      }
    }
    if (best != history_.end()) {
      e.new_tokens = e.client_prompt_tokens - std::min(parted, best->forwarded_end);
      if (e.reread > e.new_tokens) {
        e.parted_at = parted;
        if (parted < best->prompt_end) {
          e.reason = JournalEntry::Reason::kPromptChanged;
        } else if (parted < best->forwarded_end) {
          e.reason = out.cache.echo_dropped ? JournalEntry::Reason::kEchoNotTaken
                                            : JournalEntry::Reason::kRetokenized;
        } else {
          e.reason = JournalEntry::Reason::kNoAnchor;
        }
      }
      history_.erase(best);
    }
    History h;
    h.session = *e.session;
    h.prompt_end = int64_t(job.prompt.size());
    h.tokens = job.prompt;
    h.tokens.insert(h.tokens.end(), sampled.begin(), sampled.end());
    // The last sampled token is never forwarded (generation.h): the next turn reads it.
    h.forwarded_end = int64_t(h.tokens.size()) - (sampled.empty() ? 0 : 1);
    history_.push_front(std::move(h));
    while (history_.size() > options_.sessions * kPerSession) history_.pop_back();
  }
  write_line(journal_line(e) + "\n");
  return e;
}

void RequestJournal::write_line(const std::string& line) {
  if (fd_ < 0) return;
  if (bytes_ + int64_t(line.size()) > options_.max_bytes && bytes_ > 0) {
    const std::string older = options_.path + ".1";
    ::close(fd_);
    fd_ = -1;
    if (::rename(options_.path.c_str(), older.c_str()) != 0) ++write_errors_;
    fd_ = open_append(options_.path);
    bytes_ = 0;
    if (fd_ < 0) {
      ++write_errors_;
      ANCHORAGE_LOG_WARN("journal: cannot reopen after rotation (%s)", std::strerror(errno));
      return;
    }
  }
  const ssize_t w = ::write(fd_, line.data(), line.size());
  if (w != ssize_t(line.size())) {
    ++write_errors_;
    return;
  }
  bytes_ += int64_t(w);
}

}  // namespace anchorage::server

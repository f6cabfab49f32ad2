#include "server/journal_summary.h"

#include <cinttypes>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

namespace anchorage::server {

JournalSummary summarize_journal(std::string_view text) {
  JournalSummary out;
  std::map<std::string, size_t> index;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    ++out.lines;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("reread") || !j["reread"].is_number_integer() ||
        !j.contains("new_tokens") || !j["new_tokens"].is_number_integer()) {
      ++out.bad_lines;
      continue;
    }
    const std::string key =
        j["session"].is_string() ? j["session"].get<std::string>() : "no session";
    auto [it, fresh] = index.emplace(key, out.sessions.size());
    if (fresh) out.sessions.push_back(SessionSummary{key});
    SessionSummary& s = out.sessions[it->second];
    auto num = [&](const char* f) { return j.value(f, int64_t(0)); };
    const int64_t reread = num("reread"), fresh_tokens = num("new_tokens");
    if (s.requests > 0 && key != "no session") {
      ++s.follow_ups;
      if (reread <= fresh_tokens) {
        ++s.clean_follow_ups;
      } else {
        s.reread_beyond_new += reread - fresh_tokens;
      }
    }
    ++s.requests;
    s.prompt_tokens += num("prompt_tokens");
    s.cached += num("cached");
    s.reread += reread;
    s.new_tokens += fresh_tokens;
    s.generated += num("generated");
    if (!j.value("exact", true)) ++s.not_exact;
    if (j.value("served", std::string("client")) == "rows") ++s.served_rows;
  }
  return out;
}

std::string format_journal_summary(const JournalSummary& s) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%-16s %8s %10s %12s %10s %10s %10s %10s %9s %9s\n", "session",
                "requests", "follow-ups", "clean", "prompt", "cached", "reread", "new", "beyond",
                "not_exact");
  out += buf;
  for (const SessionSummary& r : s.sessions) {
    std::snprintf(buf, sizeof(buf),
                  "%-16s %8" PRId64 " %10" PRId64 " %12" PRId64 " %10" PRId64 " %10" PRId64
                  " %10" PRId64 " %10" PRId64 " %9" PRId64 " %9" PRId64 "\n",
                  r.session.c_str(), r.requests, r.follow_ups, r.clean_follow_ups, r.prompt_tokens,
                  r.cached, r.reread, r.new_tokens, r.reread_beyond_new, r.not_exact);
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "%" PRId64 " lines, %" PRId64 " not journal entries\n", s.lines,
                s.bad_lines);
  out += buf;
  return out;
}

}  // namespace anchorage::server

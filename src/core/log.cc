#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace anchorage::core {

namespace {
std::atomic<int> g_level{int(LogLevel::kInfo)};
std::mutex g_mu;
}  // namespace

void set_log_level(LogLevel level) {
  g_level.store(int(level));
}
LogLevel log_level() {
  return LogLevel(g_level.load());
}

void log(LogLevel level, const char* fmt, ...) {
  if (int(level) < g_level.load()) return;
  static const char* kNames[] = {"D", "I", "W", "E"};
  // Most lines fit the stack buffer; a longer one is formatted again at its full length rather
  // than cut (a cut line once hid the end of a long cache split).
  char buf[1024];
  std::string big;
  const char* msg = buf;
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= int(sizeof buf)) {
    big.resize(size_t(n) + 1);
    std::vsnprintf(big.data(), big.size(), fmt, again);
    big.resize(size_t(n));
    msg = big.c_str();
  }
  va_end(again);
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::lock_guard<std::mutex> lk(g_mu);
  std::fprintf(stderr, "%s %s %s\n", ts, kNames[int(level)], msg);
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

}  // namespace anchorage::core

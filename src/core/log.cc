#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

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
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::lock_guard<std::mutex> lk(g_mu);
  std::fprintf(stderr, "%s %s %s\n", ts, kNames[int(level)], msg);
}

}  // namespace anchorage::core

// Logging to stderr with a level. Never log user text: token ids, counts and hashes only.
#pragma once

#include <cstdarg>

namespace anchorage::core {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace anchorage::core

#define ANCHORAGE_LOG_INFO(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kInfo, __VA_ARGS__)
#define ANCHORAGE_LOG_WARN(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kWarn, __VA_ARGS__)
#define ANCHORAGE_LOG_ERROR(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kError, __VA_ARGS__)

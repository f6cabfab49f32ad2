// Logging to stderr with a level. Never log user text: token ids, counts and hashes only.
#pragma once

#include <cstdarg>
#include <optional>
#include <string_view>

namespace anchorage::core {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
// One line on stderr, at any length (never cut).
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// "debug", "info", "warn", "error" (the --log-level flag); nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view name);

}  // namespace anchorage::core

// Debug lines cost nothing when the level is above them: the arguments are not evaluated.
#define ANCHORAGE_LOG_DEBUG(...)                                                \
  do {                                                                          \
    if (::anchorage::core::log_level() == ::anchorage::core::LogLevel::kDebug)  \
      ::anchorage::core::log(::anchorage::core::LogLevel::kDebug, __VA_ARGS__); \
  } while (0)
#define ANCHORAGE_LOG_INFO(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kInfo, __VA_ARGS__)
#define ANCHORAGE_LOG_WARN(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kWarn, __VA_ARGS__)
#define ANCHORAGE_LOG_ERROR(...) \
  ::anchorage::core::log(::anchorage::core::LogLevel::kError, __VA_ARGS__)

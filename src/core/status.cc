#include "core/status.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "core/log.h"

namespace anchorage::core {
namespace {
std::atomic<int64_t> g_ignored{0};
}  // namespace

const char* reason_name(Reason r) {
  switch (r) {
    case Reason::kNone:
      return "none";
    case Reason::kBadMagic:
      return "bad_magic";
    case Reason::kBadVersion:
      return "bad_version";
    case Reason::kFingerprint:
      return "fingerprint";
    case Reason::kLayout:
      return "layout";
    case Reason::kHeaderCrc:
      return "header_crc";
    case Reason::kSectionCrc:
      return "section_crc";
    case Reason::kShortRead:
      return "short_read";
    case Reason::kLengthRange:
      return "length_range";
    case Reason::kTornTail:
      return "torn_tail";
    case Reason::kWrongType:
      return "wrong_type";
  }
  return "none";
}

void ignore_status(const Status& s, const char* what) {
  if (s.is_ok()) return;
  g_ignored.fetch_add(1, std::memory_order_relaxed);
  ANCHORAGE_LOG_WARN("%s failed, going on without it (%s)", what, s.to_string().c_str());
}

int64_t ignored_status_count() {
  return g_ignored.load(std::memory_order_relaxed);
}

void refuse_ok_status() {
  std::fprintf(stderr,
               "Result constructed from an OK status: a Result holds a value or a "
               "failure\n");
  std::abort();
}

std::string Status::to_string() const {
  const char* name = "OK";
  switch (code_) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kNotFound:
      name = "NotFound";
      break;
    case StatusCode::kCorruption:
      name = "Corruption";
      break;
    case StatusCode::kIOError:
      name = "IOError";
      break;
    case StatusCode::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case StatusCode::kUnsupported:
      name = "Unsupported";
      break;
    case StatusCode::kResourceExhausted:
      name = "ResourceExhausted";
      break;
    case StatusCode::kCancelled:
      name = "Cancelled";
      break;
    case StatusCode::kUnavailable:
      name = "Unavailable";
      break;
  }
  if (reason_ != Reason::kNone)
    return std::string(name) + " (" + reason_name(reason_) + "): " + message_;
  return std::string(name) + ": " + message_;
}

}  // namespace anchorage::core

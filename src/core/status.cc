#include "core/status.h"

namespace anchorage::core {

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
  return std::string(name) + ": " + message_;
}

}  // namespace anchorage::core

// Status and Result<T>: how anything that a file, the OS, a client or a model file can cause
// is reported. Our code throws nothing (docs/style.md §4). Result<T> is shaped like C++23
// std::expected so it can become an alias later.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace anchorage::core {

enum class StatusCode {
  kOk = 0,
  kNotFound,
  kCorruption,
  kIOError,
  kInvalidArgument,
  kUnsupported,
  kResourceExhausted,  // the 503 path
  kCancelled,
  kUnavailable,  // busy now; try again (the 409 of the cache peek)
};

// Why a file was refused, for the corruption counters of the cache files (docs/formats/) and
// the loaders: the code says what kind of failure it was, the reason which check caught it.
enum class Reason : uint8_t {
  kNone = 0,
  kBadMagic,     // not our file (or not a GGUF)
  kBadVersion,   // a format version this build does not read
  kFingerprint,  // written by another model, weights or engine layout
  kLayout,       // the sections or views do not have the shapes the engine expects
  kHeaderCrc,    // the header's checksum does not match
  kSectionCrc,   // a section's checksum does not match
  kShortRead,    // the file ends before what its header promises
  kLengthRange,  // a length or count outside what the format allows
  kTornTail,     // a record cut off by a crash (a journal's or spill's last block)
  // Not a file's: a request field of the wrong JSON type (the text layer's chat parser), which
  // the server answers with code invalid_type. Not in kAllReasons, which counts corrupt files.
  kWrongType,
};
inline constexpr Reason kAllReasons[] = {
    Reason::kBadMagic,  Reason::kBadVersion,  Reason::kFingerprint,
    Reason::kLayout,    Reason::kHeaderCrc,   Reason::kSectionCrc,
    Reason::kShortRead, Reason::kLengthRange, Reason::kTornTail};
// "bad_magic", "short_read", …; "none" for kNone.
const char* reason_name(Reason r);

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status not_found(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
  static Status corruption(std::string m) { return Status(StatusCode::kCorruption, std::move(m)); }
  static Status corruption(Reason r, std::string m) {
    return Status(StatusCode::kCorruption, std::move(m), r);
  }
  static Status io_error(std::string m) { return Status(StatusCode::kIOError, std::move(m)); }
  static Status invalid_argument(std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m));
  }
  static Status invalid_argument(Reason r, std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m), r);
  }
  static Status unsupported(std::string m) {
    return Status(StatusCode::kUnsupported, std::move(m));
  }
  static Status unsupported(Reason r, std::string m) {
    return Status(StatusCode::kUnsupported, std::move(m), r);
  }
  static Status resource_exhausted(std::string m) {
    return Status(StatusCode::kResourceExhausted, std::move(m));
  }
  static Status cancelled(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }
  static Status unavailable(std::string m) {
    return Status(StatusCode::kUnavailable, std::move(m));
  }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  Reason reason() const { return reason_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;
  // The same failure (code and reason) with `prefix` before its message, e.g. the file's path.
  Status with_prefix(const std::string& prefix) const {
    Status s = *this;
    s.message_ = prefix + message_;
    return s;
  }

 private:
  Status(StatusCode c, std::string m, Reason r = Reason::kNone)
      : code_(c), reason_(r), message_(std::move(m)) {}
  StatusCode code_ = StatusCode::kOk;
  Reason reason_ = Reason::kNone;
  std::string message_;
};

// A step whose failure loses only what it would have kept (a cache put, a stash put back):
// the caller goes on. Every such Status goes through here rather than a (void) cast, so it is
// logged (with `what`) and counted (ignored_status_count(), in /metrics).
void ignore_status(const Status& s, const char* what);
int64_t ignored_status_count();

[[noreturn]] void refuse_ok_status();

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // A Result holds a value or a failure: an OK status with no value is a bug.
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<1>(v_).is_ok()) refuse_ok_status();
  }
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& error() const { return std::get<1>(v_); }
  Status status() const { return has_value() ? Status::ok() : error(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace anchorage::core

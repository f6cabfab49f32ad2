// Status and Result<T>: how anything that a file, the OS, a client or a model file can cause
// is reported. Our code throws nothing (docs/style.md §4). Result<T> is shaped like C++23
// std::expected so it can become an alias later.
#pragma once

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

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status not_found(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
  static Status corruption(std::string m) { return Status(StatusCode::kCorruption, std::move(m)); }
  static Status io_error(std::string m) { return Status(StatusCode::kIOError, std::move(m)); }
  static Status invalid_argument(std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m));
  }
  static Status unsupported(std::string m) {
    return Status(StatusCode::kUnsupported, std::move(m));
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
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  Status(StatusCode c, std::string m) : code_(c), message_(std::move(m)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be OK
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

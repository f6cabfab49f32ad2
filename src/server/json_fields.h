// FieldReader: typed, range-checked reads of the top-level fields of a JSON request body. A
// field that is absent or null leaves the output untouched (clients send null for "unset");
// one of the wrong type or out of range records an ApiError naming it, and every later read
// is skipped, so a parser reads its fields in a row and checks error() once.
//
// Also: parse_json_body(), which refuses bodies nested too deep before nlohmann sees them
// (its dump and copy recurse per level).
//
// Thread safety: a FieldReader is used by one thread; the functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace anchorage::server {

using Json = nlohmann::ordered_json;

// Nesting deeper than this (arrays and objects) is refused before parsing. The traces nest 9
// deep (tool schemas); 128 leaves room and keeps every recursive walk far from the stack's end.
inline constexpr int kMaxBodyDepth = 128;

// Parses a request body that must be a JSON object. Errors: 400 "invalid_json" (malformed, or
// nested deeper than kMaxBodyDepth) or 400 "invalid_type" (not an object).
std::optional<ApiError> parse_json_body(std::string_view text, Json* out);

// True when text nests [ and { deeper than max_depth (strings are skipped). Linear, no
// recursion; a malformed text may give either answer (the parser refuses it anyway).
bool nesting_exceeds(std::string_view text, int max_depth);

class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}

  const std::optional<ApiError>& error() const { return error_; }
  bool ok() const { return !error_.has_value(); }
  // Records an error (the first one wins).
  void fail(ApiError error);

  // The member, or nullptr when absent or null.
  const Json* find(std::string_view key) const;

  void read_bool(std::string_view key, bool* out);
  // An integer in [lo, hi]; a number with a fraction (2.5) is refused, 2.0 is accepted.
  void read_int(std::string_view key, int64_t lo, int64_t hi, std::optional<int64_t>* out);
  // A finite number in [lo, hi].
  void read_number(std::string_view key, double lo, double hi, double* out);
  void read_string(std::string_view key, std::optional<std::string>* out);

 private:
  const Json& object_;
  std::optional<ApiError> error_;
};

// An integer value of any JSON number kind that is a whole number in [lo, hi].
std::optional<int64_t> as_int_in(const Json& value, int64_t lo, int64_t hi);

}  // namespace anchorage::server

#include "server/json_fields.h"

#include <cmath>
#include <cstdio>

namespace anchorage::server {

bool nesting_exceeds(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::optional<ApiError> parse_json_body(std::string_view text, Json* out) {
  if (nesting_exceeds(text, kMaxBodyDepth)) {
    return field_error("",
                       "the body nests arrays and objects deeper than " +
                           std::to_string(kMaxBodyDepth) + " levels",
                       "invalid_json");
  }
  // No exceptions: a malformed body gives a discarded value, and invalid UTF-8 in a string is
  // a parse error too (nlohmann checks it), so every string we hold afterwards is valid UTF-8.
  *out = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {
    return field_error("", "the body is not valid JSON", "invalid_json");
  }
  if (!out->is_object()) {
    return field_error("", "the body must be a JSON object", "invalid_type");
  }
  return std::nullopt;
}

void FieldReader::fail(ApiError error) {
  if (!error_) error_ = std::move(error);
}

const Json* FieldReader::find(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void FieldReader::read_bool(std::string_view key, bool* out) {
  if (!ok()) return;
  const Json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_boolean())
    return fail(field_error(std::string(key), "must be a boolean", "invalid_type"));
  *out = v->get<bool>();
}

std::optional<int64_t> as_int_in(const Json& value, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > uint64_t(INT64_MAX)) return std::nullopt;
    x = int64_t(u);
  } else if (value.is_number_integer()) {
    x = value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    // 2^63 is the first double past int64's range; NaN fails every comparison.
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) || d != std::floor(d))
      return std::nullopt;
    x = int64_t(d);
  } else {
    return std::nullopt;
  }
  if (x < lo || x > hi) return std::nullopt;
  return x;
}

void FieldReader::read_int(std::string_view key, int64_t lo, int64_t hi,
                           std::optional<int64_t>* out) {
  if (!ok()) return;
  const Json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_number())
    return fail(field_error(std::string(key), "must be an integer", "invalid_type"));
  const std::optional<int64_t> x = as_int_in(*v, lo, hi);
  if (!x) {
    return fail(field_error(std::string(key), "must be an integer in [" + std::to_string(lo) +
                                                  ", " + std::to_string(hi) + "]"));
  }
  *out = x;
}

void FieldReader::read_number(std::string_view key, double lo, double hi, double* out) {
  if (!ok()) return;
  const Json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_number())
    return fail(field_error(std::string(key), "must be a number", "invalid_type"));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    char range[64];
    std::snprintf(range, sizeof(range), "[%g, %g]", lo, hi);
    return fail(field_error(std::string(key), std::string("must be a number in ") + range));
  }
  *out = x;
}

void FieldReader::read_string(std::string_view key, std::optional<std::string>* out) {
  if (!ok()) return;
  const Json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_string())
    return fail(field_error(std::string(key), "must be a string", "invalid_type"));
  *out = v->get<std::string>();
}

}  // namespace anchorage::server

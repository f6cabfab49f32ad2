#include "text/python_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "core/check.h"
#include "text/json_string.h"

namespace anchorage::text {
namespace {

template <typename Int>
void append_integer(Int v, std::string* out) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

void append_python_float(double value, std::string* out) {
  if (std::isnan(value)) {
    *out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    *out += value > 0 ? "Infinity" : "-Infinity";
    return;
  }
  // std::to_chars without a precision gives the shortest digits that round-trip, the same digit
  // string Python's repr picks (both are "shortest, closest"); only the layout differs.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  ANCHORAGE_CHECK(r.ec == std::errc());
  const char* p = buf;
  const char* end = r.ptr;
  if (*p == '-') {
    out->push_back('-');
    ++p;
  }
  std::string digits;
  for (; p < end && *p != 'e'; ++p) {
    if (*p != '.') digits.push_back(*p);
  }
  ANCHORAGE_CHECK(p < end && *p == 'e');
  int exp10 = 0;
  const char* exp_begin = p + 1;
  if (*exp_begin == '+') ++exp_begin;
  const auto er = std::from_chars(exp_begin, end, exp10);
  ANCHORAGE_CHECK(er.ec == std::errc());
  // value = 0.DIGITS * 10^decpt. CPython (format_float_short, repr mode) switches to exponent
  // notation when decpt <= -4 or decpt > 16.
  const int decpt = exp10 + 1;
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      *out += "0.";
      out->append(static_cast<size_t>(-decpt), '0');
      *out += digits;
    } else if (decpt >= n) {
      *out += digits;
      out->append(static_cast<size_t>(decpt - n), '0');
      *out += ".0";
    } else {
      out->append(digits, 0, static_cast<size_t>(decpt));
      out->push_back('.');
      out->append(digits, static_cast<size_t>(decpt), std::string::npos);
    }
    return;
  }
  out->push_back(digits[0]);
  if (n > 1) {
    out->push_back('.');
    out->append(digits, 1, std::string::npos);
  }
  out->push_back('e');
  out->push_back(exp10 < 0 ? '-' : '+');
  const int abs_exp = std::abs(exp10);
  if (abs_exp < 10) out->push_back('0');
  append_integer(abs_exp, out);
}

void append_python_json(const nlohmann::ordered_json& value, std::string* out) {
  using Kind = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Kind::null:
    case Kind::discarded:
      *out += "null";
      return;
    case Kind::boolean:
      *out += value.get<bool>() ? "true" : "false";
      return;
    case Kind::number_integer:
      append_integer(value.get<std::int64_t>(), out);
      return;
    case Kind::number_unsigned:
      append_integer(value.get<std::uint64_t>(), out);
      return;
    case Kind::number_float:
      append_python_float(value.get<double>(), out);
      return;
    case Kind::string:
      append_json_string(value.get_ref<const std::string&>(), out);
      return;
    case Kind::array: {
      out->push_back('[');
      bool first = true;
      for (const auto& element : value) {
        if (!first) *out += ", ";
        first = false;
        append_python_json(element, out);
      }
      out->push_back(']');
      return;
    }
    case Kind::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, element] : value.items()) {
        if (!first) *out += ", ";
        first = false;
        append_json_string(key, out);
        *out += ": ";
        append_python_json(element, out);
      }
      out->push_back('}');
      return;
    }
    case Kind::binary:
      break;
  }
  // Binary values never come out of a JSON text; Python has no JSON form for them either.
  ANCHORAGE_CHECK_MSG(false, "binary value in python json dump");
}

std::string dump_python_json(const nlohmann::ordered_json& value) {
  std::string out;
  append_python_json(value, &out);
  return out;
}

}  // namespace anchorage::text

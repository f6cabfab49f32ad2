#include "server/json_writer.h"

#include <charconv>
#include <cmath>

#include "text/json_string.h"
#include "text/utf8.h"

namespace anchorage::server {
namespace {

using Json = nlohmann::ordered_json;

void write_string(const std::string& s, std::string* out) {
  if (text::utf8_is_valid(s)) {
    text::append_json_string(s, out);
    return;
  }
  std::string valid;
  (void)text::utf8_append_lossy(s, /*final=*/true, &valid);
  text::append_json_string(valid, out);
}

template <typename T>
void write_number(T v, std::string* out) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void write_double(double d, std::string* out) {
  if (!std::isfinite(d)) {
    *out += "null";  // JSON has no NaN or infinity (nlohmann writes null too)
    return;
  }
  const size_t start = out->size();
  write_number(d, out);
  // Keep it a float to the eye, as nlohmann does ("3.0", not "3").
  if (out->find_first_of(".eEn", start) == std::string::npos) *out += ".0";
}

void write_value(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      *out += "null";
      break;
    case Json::value_t::boolean:
      *out += v.get<bool>() ? "true" : "false";
      break;
    case Json::value_t::number_integer:
      write_number(v.get<int64_t>(), out);
      break;
    case Json::value_t::number_unsigned:
      write_number(v.get<uint64_t>(), out);
      break;
    case Json::value_t::number_float:
      write_double(v.get<double>(), out);
      break;
    case Json::value_t::string:
      write_string(v.get_ref<const std::string&>(), out);
      break;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& e : v) {
        if (!first) out->push_back(',');
        first = false;
        write_value(e, out);
      }
      out->push_back(']');
      break;
    }
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, e] : v.items()) {
        if (!first) out->push_back(',');
        first = false;
        write_string(key, out);
        out->push_back(':');
        write_value(e, out);
      }
      out->push_back('}');
      break;
    }
    case Json::value_t::binary:
      *out += "null";  // never built by the server
      break;
  }
}

}  // namespace

std::string write_json(const nlohmann::ordered_json& value) {
  std::string out;
  write_value(value, &out);
  return out;
}

}  // namespace anchorage::server

// Serialises JSON the way Python's json.dumps(value, ensure_ascii=False) does with its default
// separators (", " and ": "), byte for byte. The Qwen3 chat template prints `tools` and object
// tool-call arguments through Hugging Face's `tojson` filter, which is exactly that call; the
// prompt (and so every cache key) must not depend on which JSON library printed it.
//
// Rules mirrored (CPython Lib/json/encoder.py, c_encode_basestring):
// - object keys in insertion order (use nlohmann::ordered_json to keep the client's order);
// - strings: `"` `\\` `\n` `\r` `\t` `\b` `\f` get their short escapes, every other byte below
//   0x20 becomes \u00XX (lowercase hex); everything else, DEL and non-ASCII included, is copied;
// - integers in decimal; floats as Python's repr (shortest round-trip digits, fixed notation for
//   1e-4 <= |x| < 1e16 with at least one digit after the point, else d.ddde+XX), NaN and
//   +-Infinity as Python prints them.
// Limit: nlohmann stores an integer outside [-2^63, 2^64) as a double, so it prints as a float;
// Python would print the exact integer.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace anchorage::text {

// Appends the json.dumps text of `value` to `out`.
void append_python_json(const nlohmann::ordered_json& value, std::string* out);

// Returns the json.dumps text of `value`.
std::string dump_python_json(const nlohmann::ordered_json& value);

// Appends Python's repr() of a double (what json.dumps prints for a float).
void append_python_float(double value, std::string* out);

}  // namespace anchorage::text

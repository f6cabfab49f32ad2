// write_json: serialises the JSON the server sends. Compact, with nlohmann's separators and
// string escapes, but two things nlohmann's dump() does not promise:
// - a floating-point number is the shortest decimal that reads back to the same double
//   (std::to_chars); nlohmann's Grisu2 prints some values with 17 digits (-11.45282 comes out
//   as -11.452819999999999), which would make log-probabilities long and their f32 origin
//   hard to see;
// - bytes that are not UTF-8 (a byte token's text in logprobs) become U+FFFD, one maximal
//   subpart at a time (text/utf8.h), instead of an exception.
// Recursive: meant for the shallow trees we build, never for client input.
//
// Thread safety: pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace anchorage::server {

std::string write_json(const nlohmann::ordered_json& value);

}  // namespace anchorage::server

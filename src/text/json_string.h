// append_json_string: a JSON string literal with the escapes both Python's json.dumps and
// nlohmann's dump() write — `"` `\\` `\n` `\r` `\t` `\b` `\f` short, every other byte below 0x20
// as \u00XX (lowercase hex), everything else (DEL, non-ASCII) copied. One implementation for the
// chat template's tojson (text/python_json.h) and the server's responses (server/json_writer.h).
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace anchorage::text {

void append_json_string(std::string_view s, std::string* out);

}  // namespace anchorage::text

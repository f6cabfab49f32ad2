// Server-sent events framing (the WHATWG EventSource format OpenAI streams use): each JSON
// chunk is one `data:` line and a blank line, the stream ends with `data: [DONE]`, and a
// comment line keeps an idle stream alive. JSON from nlohmann::dump has no raw newline (they
// are escaped inside strings), so one data line always holds a whole chunk.
//
// Thread safety: pure functions and constants.
#pragma once

#include <string>
#include <string_view>

namespace anchorage::server {

inline constexpr std::string_view kSseContentType = "text/event-stream";
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";
// A comment: EventSource parsers and the OpenAI SDKs skip it.
inline constexpr std::string_view kSsePing = ": ping\n\n";

// "data: <json>\n\n".
std::string sse_event(std::string_view json_text);

}  // namespace anchorage::server

#include "server/sse.h"

#include "core/check.h"

namespace anchorage::server {

std::string sse_event(std::string_view json_text) {
  // A raw newline would end the event early and hand the client half a JSON object.
  ANCHORAGE_CHECK(json_text.find('\n') == std::string_view::npos);
  std::string out;
  out.reserve(json_text.size() + 8);
  out += "data: ";
  out += json_text;
  out += "\n\n";
  return out;
}

}  // namespace anchorage::server

#include "server/stop_matcher.h"

#include <algorithm>

namespace anchorage::server {

void StopMatcher::feed(std::string_view text, std::string* out) {
  if (matched_) return;
  if (stops_.empty()) {
    out->append(text);
    return;
  }
  held_.append(text);
  // The earliest stop string wins; at one position, any of them (they end the text alike).
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    out->append(held_, 0, first);
    held_.clear();
    matched_ = true;
    return;
  }
  // Hold the longest tail of held_ that is a proper prefix of some stop string. It starts on
  // a character boundary: stop strings are valid UTF-8 and begin with a lead byte.
  size_t keep = 0;
  for (const std::string& stop : stops_) {
    const size_t max_len = std::min(stop.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (held_.compare(held_.size() - len, len, stop, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  out->append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
}

void StopMatcher::flush(std::string* out) {
  if (!matched_) out->append(held_);
  held_.clear();
}

}  // namespace anchorage::server

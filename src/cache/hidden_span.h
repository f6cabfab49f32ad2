// HiddenSpan: token positions [begin, end) of the engine's rows that the client never sees (a
// reasoning budget's close phrase the server inserted, a note), so its copy of the
// conversation lacks them and the end anchor must put them back (EndReplay). A value type.
#pragma once

#include <cstdint>

namespace anchorage::cache {

struct HiddenSpan {
  int64_t begin = 0;  // first hidden position
  int64_t end = 0;    // one past the last

  bool empty() const { return end <= begin; }
};

}  // namespace anchorage::cache

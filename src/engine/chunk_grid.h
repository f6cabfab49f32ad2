// ChunkGrid: where a prefill is cut into forward() calls (docs/engine.md "Chunking").
//
// A prefill of tokens [begin, end) runs as calls [pos, next_end(pos, end)) until it reaches
// end. A call ends at the first of:
//   - end;
//   - the next absolute anchor line (a multiple of anchor_spacing) after pos, so the engine
//     can hand the state at every line to the caches;
//   - pos + chunk_tokens (the workspace is sized for chunk_tokens);
//   - when pos is off the architecture's exact grid (a multiple of granularity), the next grid
//     line, so every later call starts on the grid again.
// chunk_tokens and anchor_spacing are multiples of granularity (EngineOptions checks it), so a
// prefill that starts on the grid only ever starts calls on the grid.
//
// Threading: a value type; const methods may be called from any thread.
#pragma once

#include <cstdint>

namespace anchorage::engine {

struct ChunkGrid {
  int64_t chunk_tokens = 1024;
  int64_t anchor_spacing = 1024;
  int64_t granularity = 1;

  // The end of the call that starts at pos, for a prefill that ends at end (pos < end).
  int64_t next_end(int64_t pos, int64_t end) const;
  // Whether pos (> 0) is an anchor line.
  bool is_anchor_line(int64_t pos) const { return pos > 0 && pos % anchor_spacing == 0; }
};

}  // namespace anchorage::engine

// StateCost: the bytes a memory budget counts for one sequence of an engine (docs/architecture.md
// §3 `cost()`). The caches size their tiers from it without knowing the model.
//
// Threading: a value type.
#pragma once

#include <cstdint>

namespace anchorage::engine {

struct StateCost {
  int64_t section_bytes = 0;    // every section, whole (one anchor's copy)
  int64_t bytes_per_token = 0;  // every view, one position (one row of every view)
  // The scratch a forward call needs, including the engine's logits row: a one-token call
  // (decode) needs workspace_floor; a T-token prefill call about floor + per_token * (T - 1),
  // and never more than workspace_cap, because prefills are cut into chunks (EngineOptions).
  int64_t workspace_floor = 0;
  int64_t workspace_per_token = 0;
  int64_t workspace_cap = 0;
};

}  // namespace anchorage::engine

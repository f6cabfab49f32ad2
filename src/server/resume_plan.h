// ResumePlan: where a request's prompt resumes on the engine — the seam the caches plug into.
// A later issue adds cache/'s Planner, which asks every tier (resident prefix, state store,
// disk, session spill) where the prompt could resume and at what cost, restores that state
// and returns the plan; the engine queue then prefills only prompt[resume_at, end).
// Until then every request starts cold: a reset engine that reads its whole prompt.
//
// Thread safety: plain values and a pure function (called on the engine thread).
#pragma once

#include <cstdint>
#include <string>

namespace anchorage::server {

struct ResumePlan {
  int64_t resume_at = 0;        // tokens of the prompt already in the engine's state
  std::string tier = "none";    // which cache served them (usage.anchorage.cache.tier)
  std::string source = "cold";  // how (usage.anchorage.cache.source)
};

// The plan without caches: reset, start at 0.
inline ResumePlan plan_cold_start() {
  return ResumePlan{};
}

}  // namespace anchorage::server

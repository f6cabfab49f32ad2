// ResumeOffer: what one tier can do for a prompt — the position it could resume at, where from,
// and what the restore costs — so the Planner can compare tiers without knowing them.
// A value type.
#pragma once

#include <cstdint>

#include "cache/resume_source.h"

namespace anchorage::cache {

struct ResumeOffer {
  int64_t resume_at = 0;  // prompt tokens the restored state covers (0: nothing)
  ResumeSource source = ResumeSource::kCold;  // its tier: tier_of(source)
  int64_t restore_bytes = 0;  // bytes the restore copies (the planner's cost of taking it)
  int64_t tag = 0;            // tier-private: which anchor / entry the offer means
  // False when the restored state is held to the greedy gate only (tainted rows: written by
  // decode, or off the engine's exact grid; docs/exactness.md), not to bit equality.
  bool exact = true;
  // Estimated milliseconds the restore takes where it is a read (the disk tiers); 0 for a copy
  // in RAM. The Planner takes such an offer only when the prefill it saves costs more.
  double restore_ms = 0.0;

  bool useful() const { return resume_at > 0; }
};

}  // namespace anchorage::cache

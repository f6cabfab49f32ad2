// ResumeSource: where a request's prompt resumed from — one closed list, so the compiler finds
// every switch a new tier forgets. Names (for usage, the peek route, /metrics and logs) come from
// name() and tier_name(tier_of()), and only where JSON, metrics or logs are written.
//
// Adding a tier: a source here (and in kAllResumeSources), its tier in tier_of(), an
// OfferSource that offers it, a restore step in server::EngineCaches, a stats struct
// (docs/cache.md "Adding a tier").
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace anchorage::cache {

enum class ResumeSource : uint8_t {
  kCold,      // nothing restored: a prefill from token 0
  kAnchor,    // a body anchor over the rows in place
  kEnd,       // the end anchor over the rows in place
  kPin,       // the pinned head
  kPark,      // the parked session
  kStore,     // a state store snapshot
  kDisk,      // a disk tier anchor and its chunks
  kSpill,     // a session spill entry: a whole conversation on the disk
  kResponse,  // a whole response from the response cache (no engine work)
  // A compaction served as the continuation of the session's conversation (its end anchor in
  // place, parked or spilled); never planned: EngineCaches reports it for a start another
  // source restored (CacheSplit::restored_by).
  kContinuation,
  // A compaction answered from the summary written ahead while the engine was idle (no engine
  // work; server::EngineCaches, docs/compaction.md).
  kPrepared,
};

// The tier a source belongs to, as usage and the peek route report it.
enum class ResumeTier : uint8_t {
  kNone,         // cold
  kResident,     // the rows in place
  kRamPark,      // rows kept aside in RAM: pin, park
  kRamSnapshot,  // the state store
  kDisk,         // the disk tier
  kSpill,        // the session spill
  kResponse,     // the response cache
};

inline constexpr std::array<ResumeSource, 11> kAllResumeSources = {
    ResumeSource::kCold,         ResumeSource::kAnchor,  ResumeSource::kEnd,
    ResumeSource::kPin,          ResumeSource::kPark,    ResumeSource::kStore,
    ResumeSource::kDisk,         ResumeSource::kSpill,   ResumeSource::kResponse,
    ResumeSource::kContinuation, ResumeSource::kPrepared};

constexpr ResumeTier tier_of(ResumeSource s) {
  switch (s) {
    case ResumeSource::kCold:
      return ResumeTier::kNone;
    case ResumeSource::kAnchor:
    case ResumeSource::kEnd:
    case ResumeSource::kContinuation:
      return ResumeTier::kResident;
    case ResumeSource::kPin:
    case ResumeSource::kPark:
      return ResumeTier::kRamPark;
    case ResumeSource::kStore:
      return ResumeTier::kRamSnapshot;
    case ResumeSource::kDisk:
      return ResumeTier::kDisk;
    case ResumeSource::kSpill:
      return ResumeTier::kSpill;
    case ResumeSource::kResponse:
    case ResumeSource::kPrepared:
      return ResumeTier::kResponse;
  }
  return ResumeTier::kNone;
}

constexpr std::string_view name(ResumeSource s) {
  switch (s) {
    case ResumeSource::kCold:
      return "cold";
    case ResumeSource::kAnchor:
      return "anchor";
    case ResumeSource::kEnd:
      return "end";
    case ResumeSource::kPin:
      return "pin";
    case ResumeSource::kPark:
      return "park";
    case ResumeSource::kStore:
      return "store";
    case ResumeSource::kDisk:
      return "disk";
    case ResumeSource::kSpill:
      return "spill";
    case ResumeSource::kResponse:
      return "response";
    case ResumeSource::kContinuation:
      return "continuation";
    case ResumeSource::kPrepared:
      return "prepared";
  }
  return "cold";
}

constexpr std::string_view name(ResumeTier t) {
  switch (t) {
    case ResumeTier::kNone:
      return "none";
    case ResumeTier::kResident:
      return "resident";
    case ResumeTier::kRamPark:
      return "ram_park";
    case ResumeTier::kRamSnapshot:
      return "ram_snapshot";
    case ResumeTier::kDisk:
      return "disk_tier";
    case ResumeTier::kSpill:
      return "nvme_spill";
    case ResumeTier::kResponse:
      return "response";
  }
  return "none";
}

constexpr std::string_view tier_name(ResumeSource s) {
  return name(tier_of(s));
}

}  // namespace anchorage::cache

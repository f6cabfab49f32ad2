// DiskAdmission: what a long prefill writes to the disk tier, decided before it runs (the
// seed's rules; docs/disk-tier.md "Admission"):
//   - every grid line a prefill forwards cold is counted by the hash of the prefix up to it
//     (resumed lines are not: the count is the work the tier would have saved);
//   - the longest line of the prompt counted `admit_after` times gets an anchor;
//   - a branch: a line counted admit_after times whose next line's count is lower (an earlier
//     prompt read this far and went on differently) gets one too, the `branch_max` longest,
//     only in the head (below where the last user message starts);
//   - a session's first long request gets anchors at the last `head_anchors` lines below where
//     its last user message starts, and one at its last token (a session that repeats the head
//     exactly resumes there);
//   - nothing for prompts under `min_tokens`, from an inexact start, or above the taint line.
// The counts are traffic, not rows: keyed without the fingerprint, so a deploy keeps them;
// they decide what is written, never what is read. They persist in the tier's directory
// (AdmissionCounts::encode/decode, docs/formats/disk-tier.md "Admission counts").
//
// Thread safety: none; the engine thread owns it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache_key.h"
#include "core/status.h"

namespace anchorage::cache {

struct DiskAdmissionOptions {
  int admit_after = 2;
  int head_anchors = 4;
  int branch_max = 4;
  int64_t min_tokens = 4096;
  size_t max_counted_lines = 65536;  // the oldest-seen lines go first past this
};

class AdmissionCounts {
 public:
  int64_t count(const CacheKey& line) const;
  // Adds one cold read; `day` (days since the epoch) orders the entries for the cap.
  int64_t add(const CacheKey& line, uint32_t day, size_t cap);
  size_t size() const { return counts_.size(); }
  void clear() { counts_.clear(); }
  // Binary records for the admission file, and back (Corruption on a malformed blob).
  std::vector<std::byte> encode() const;
  core::Status decode(std::span<const std::byte> bytes);

 private:
  struct Entry {
    uint32_t count = 0;
    uint32_t day = 0;
  };
  std::unordered_map<CacheKey, Entry, CacheKeyHash> counts_;
};

struct AdmissionRequest {
  std::span<const int32_t> prompt;
  int64_t resume_at = 0;
  bool exact = true;              // the start is a cold prefill's bits
  bool first_of_session = false;  // the session's first long request (a head)
  int64_t head_end = 0;           // where the last user message starts (prompt size: unknown)
  int64_t taint = INT64_MAX;      // rows from here are not a cold prefill's
  uint32_t day = 0;
};

struct AdmissionPlan {
  std::vector<int64_t> anchors;  // positions, ascending, each in (resume_at, prompt size)
  bool empty() const { return anchors.empty(); }
};

// Counts the request's cold lines (in `counts`) and says which anchors to write.
AdmissionPlan admit(const AdmissionRequest& req, int64_t grid, const DiskAdmissionOptions& opts,
                    AdmissionCounts* counts);

}  // namespace anchorage::cache

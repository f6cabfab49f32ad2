// open_disk_tier: the disk tier and the session spill a server runs, from its cache options and
// model: the root directory (created 0700), the model's fingerprint (weights by content, the
// architecture's manifest, the grid), and the tier's own directory <root>/disk opened over `fs`.
#pragma once

#include <memory>

#include "cache/disk_tier.h"
#include "core/fault_fs.h"
#include "core/fs.h"
#include "core/posix_fs.h"
#include "core/status.h"
#include "server/engine_caches.h"
#include "server/served_model.h"

namespace anchorage::server {

// With options.spill, the session spill too, in <root>/sessions (docs/session-spill.md); a spill
// that cannot open leaves the tier running without it (logged).
core::Result<DiskTiers> open_disk_tier(core::Fs& fs, const CacheOptions& options,
                                       const ServedModel& model);

// The file system the disk tier writes through: PosixFs, or — when the environment variable
// ANCHORAGE_FS_CRASH_AT=<point>:<k>[:<part>] is set (a crash test's seam, docs/disk-tier.md
// "Crash safety") — a FaultFs over it that SIGKILLs the process at the k-th crash point of that
// name (created, appended, synced, renamed, dir_synced), on a path containing `part` if given.
class DiskFs {
 public:
  DiskFs();
  ~DiskFs();
  core::Fs& fs() { return fault_ ? static_cast<core::Fs&>(*fault_) : posix_; }

 private:
  core::PosixFs posix_;
  std::unique_ptr<core::FaultFs> fault_;
};

// The default root: $XDG_CACHE_HOME/anchorage, else $HOME/.cache/anchorage; empty when neither
// variable is set.
std::string default_disk_root();

}  // namespace anchorage::server

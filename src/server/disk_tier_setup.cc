#include "server/disk_tier_setup.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>

#include "cache/blob_store.h"
#include "cache/fingerprint.h"
#include "core/log.h"

namespace anchorage::server {

DiskFs::DiskFs() {
  const char* spec = std::getenv("ANCHORAGE_FS_CRASH_AT");
  if (spec == nullptr) return;
  const std::string s = spec;
  const size_t colon = s.find(':');
  const std::string point = s.substr(0, colon);
  const int64_t k = colon == std::string::npos ? 1 : std::atoll(s.c_str() + colon + 1);
  // A third field: only steps on paths containing it count (e.g. `sessions`: the spill's).
  const size_t second = colon == std::string::npos ? colon : s.find(':', colon + 1);
  const std::string within = second == std::string::npos ? "" : s.substr(second + 1);
  for (int i = 0; i < core::kCrashPointCount; ++i) {
    const auto p = static_cast<core::CrashPoint>(i);
    if (point != core::crash_point_name(p)) continue;
    fault_ = std::make_unique<core::FaultFs>(posix_);
    fault_->crash_at(
        p, std::max<int64_t>(k, 1), [] { ::raise(SIGKILL); }, within);
    core::log(core::LogLevel::kWarn, "ANCHORAGE_FS_CRASH_AT: this process dies at %s #%lld%s%s",
              point.c_str(), (long long)k, within.empty() ? "" : " within ", within.c_str());
    return;
  }
  core::log(core::LogLevel::kWarn, "ANCHORAGE_FS_CRASH_AT=%s names no crash point; ignored", spec);
}

DiskFs::~DiskFs() = default;

std::string default_disk_root() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return core::path_join(xdg, "anchorage");
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    return core::path_join(core::path_join(home, ".cache"), "anchorage");
  return {};
}

core::Result<DiskTiers> open_disk_tier(core::Fs& fs, const CacheOptions& options,
                                       const ServedModel& model) {
  if (options.disk_root.empty()) return core::Status::invalid_argument("disk tier: no directory");
  auto fingerprint = cache::compute_fingerprint(fs, *model.engine, model.weights);
  if (!fingerprint) return fingerprint.error().with_prefix("disk tier fingerprint: ");
  // The root holds the write guard's day counts (shared with the session spill); the tier's
  // files go in root/disk.
  auto root = cache::LocalDirStore::open(fs, options.disk_root);
  if (!root) return root.error();
  // One server per directory: another one's start would sweep files this one reads (another
  // model's fingerprint) and its evictions would delete them.
  auto lock = fs.lock(core::path_join(options.disk_root, "lock"));
  if (!lock) return lock.error().with_prefix("another server uses this directory: ");
  cache::DiskTierOptions disk = options.disk;
  disk.guard =
      std::shared_ptr<cache::WriteGuard>(cache::WriteGuard::open(root->get(), options.write_guard));
  DiskTiers tiers;
  if (options.spill) {
    cache::SessionSpillOptions so = options.spill_options;
    so.guard = disk.guard;
    auto sessions = cache::LocalDirStore::open(fs, core::path_join(options.disk_root, "sessions"));
    auto spill = sessions ? cache::SessionSpill::open(std::move(*sessions), fingerprint->hex,
                                                      model.engine->layout(),
                                                      model.engine->exact_granularity(), so)
                          : core::Result<std::unique_ptr<cache::SessionSpill>>(sessions.error());
    if (spill) {
      const cache::SessionSpillStats st = (*spill)->stats();
      core::log(core::LogLevel::kInfo,
                "session spill: %s/sessions, %lld entries (%.2f GiB), %lld files swept",
                options.disk_root.c_str(), (long long)st.entries,
                double(st.bytes) / double(1 << 30), (long long)st.swept_files);
      tiers.spill = std::move(*spill);
    } else {
      core::log(core::LogLevel::kWarn, "session spill off: %s", spill.error().to_string().c_str());
    }
  }
  auto store = cache::LocalDirStore::open(fs, core::path_join(options.disk_root, "disk"));
  if (!store) return store.error();
  const int removed = (*store)->removed_tmp_files();
  auto tier = cache::DiskTier::open(std::move(*store), fingerprint->hex, model.engine->layout(),
                                    model.engine->grid().anchor_spacing, std::move(disk));
  if (tier) {
    (*tier)->keep_alive(std::move(*root));
    (*tier)->keep_alive(std::move(*lock));
  }
  if (!tier) return tier.error();
  tiers.tier = std::move(*tier);
  const cache::DiskTierStats st = tiers.tier->stats();
  core::log(core::LogLevel::kInfo,
            "disk tier: %s/disk, fingerprint %.12s, %lld anchors and %lld chunks (%.2f GiB), "
            "%lld files of other fingerprints swept, %d unfinished writes removed",
            options.disk_root.c_str(), fingerprint->hex.c_str(), (long long)st.anchors,
            (long long)st.chunks, double(st.bytes) / double(1 << 30), (long long)st.swept_files,
            removed);
  return tiers;
}

}  // namespace anchorage::server

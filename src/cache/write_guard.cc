#include "cache/write_guard.h"

#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "cache/cache_file.h"
#include "core/log.h"

namespace anchorage::cache {
namespace {

constexpr int kKeptDays = 14;

int64_t system_utc_offset_s() {
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  return local.tm_gmtoff;
}

int64_t system_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* write_level_name(WriteLevel l) {
  switch (l) {
    case WriteLevel::kOk:
      return "ok";
    case WriteLevel::kOver:
      return "over";
    case WriteLevel::kHard:
      return "hard";
  }
  return "ok";
}

WriteGuard::WriteGuard(BlobStore* store, WriteGuardOptions options)
    : store_(store), options_(std::move(options)) {
  utc_offset_s_ = options_.utc_offset_s ? *options_.utc_offset_s : system_utc_offset_s();
}

std::unique_ptr<WriteGuard> WriteGuard::open(BlobStore* store, WriteGuardOptions options) {
  std::unique_ptr<WriteGuard> g(new WriteGuard(store, std::move(options)));
  if (store == nullptr) return g;
  auto file = store->open(kFileName);
  if (!file) return g;  // a first start
  auto f = CacheFile::open(std::move(*file), CacheFileKind::kWrites);
  const nlohmann::json* days = nullptr;
  if (f && f->meta().contains("days") && f->meta()["days"].is_array()) days = &f->meta()["days"];
  if (days == nullptr) {
    ANCHORAGE_LOG_WARN("write guard: %s refused (%s); the day's count starts at zero", kFileName,
                       f ? "no day list" : f.error().to_string().c_str());
    return g;
  }
  for (const nlohmann::json& d : *days) {
    if (!d.is_array() || d.size() != 3 || !d[0].is_number_integer() || !d[1].is_number_integer() ||
        !d[2].is_number_integer())
      continue;
    WriteDay w{d[0].get<int64_t>(), d[1].get<int64_t>(), d[2].get<int64_t>()};
    g->days_[w.day] = w;
  }
  return g;
}

int64_t WriteGuard::today() const {
  const int64_t now = options_.now_s ? options_.now_s() : system_now_s();
  const int64_t local = now + utc_offset_s_;
  return local >= 0 ? local / 86400 : (local - 86399) / 86400;
}

WriteDay& WriteGuard::day_locked(int64_t day) {
  WriteDay& d = days_[day];
  d.day = day;
  while (int(days_.size()) > kKeptDays) days_.erase(days_.begin());
  return days_[day];
}

WriteLevel WriteGuard::level_locked() const {
  auto it = days_.find(today());
  const int64_t written = it == days_.end() ? 0 : it->second.tier_bytes + it->second.spill_bytes;
  const int64_t b = options_.budget_bytes;
  if (written * 2 > b * 3) return WriteLevel::kHard;
  if (written > b) return WriteLevel::kOver;
  return WriteLevel::kOk;
}

WriteLevel WriteGuard::level() const {
  std::lock_guard<std::mutex> lock(mu_);
  return level_locked();
}

void WriteGuard::note_skip_locked(const char* what, int64_t* counter) {
  ++*counter;
  const int64_t day = today();
  if (day != logged_day_) {
    logged_day_ = day;
    logged_tier_ = logged_spill_ = false;
  }
  bool& logged = counter == &tier_skips_ ? logged_tier_ : logged_spill_;
  if (logged) return;
  logged = true;
  ANCHORAGE_LOG_WARN(
      "write guard: the day's disk writes are past the budget (%s): %s skipped "
      "(logged once a day; counted in /health cache.disk_writes)",
      write_level_name(level_locked()), what);
}

bool WriteGuard::allow_tier() {
  std::lock_guard<std::mutex> lock(mu_);
  if (level_locked() == WriteLevel::kOk) return true;
  note_skip_locked("disk tier writes", &tier_skips_);
  return false;
}

bool WriteGuard::allow_spill(SpillWrite kind, int64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  const WriteLevel l = level_locked();
  const bool ok = l == WriteLevel::kOk || kind == SpillWrite::kDrain ||
                  (l == WriteLevel::kOver && tokens >= options_.long_conversation_tokens);
  if (!ok) note_skip_locked("session spill writes", &spill_skips_);
  return ok;
}

void WriteGuard::add(WriteSource source, int64_t bytes) {
  if (bytes <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  WriteDay& d = day_locked(today());
  (source == WriteSource::kTier ? d.tier_bytes : d.spill_bytes) += bytes;
  save_locked();
}

// The counts go to the guard's own small file (its writes are not counted: a few hundred
// bytes per request against gigabytes).
void WriteGuard::save_locked() {
  if (store_ == nullptr) return;
  nlohmann::json days = nlohmann::json::array();
  for (const auto& [day, d] : days_) days.push_back({d.day, d.tier_bytes, d.spill_bytes});
  CacheFileWriter w(CacheFileKind::kWrites, CacheKey{}, nlohmann::json{{"days", days}});
  core::ignore_status(store_->put(kFileName, w.parts()), "write guard: counts not saved");
}

WriteGuardStats WriteGuard::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  WriteGuardStats s;
  s.budget_bytes = options_.budget_bytes;
  s.level = level_locked();
  const int64_t day = today();
  if (auto it = days_.find(day); it != days_.end()) s.today = it->second;
  s.today.day = day;
  s.tier_skips = tier_skips_;
  s.spill_skips = spill_skips_;
  for (auto it = days_.rbegin(); it != days_.rend(); ++it) s.last_days.push_back(it->second);
  return s;
}

}  // namespace anchorage::cache

#include "cache/disk_admission.h"
#include "core/byte_order.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace anchorage::cache {
namespace {

using core::get_u32le;
using core::get_u64le;
using core::put_u32le;
using core::put_u64le;

constexpr size_t kRecordBytes = 24;  // key lo, key hi (u64le), count, day (u32le)

}  // namespace

int64_t AdmissionCounts::count(const CacheKey& line) const {
  auto it = counts_.find(line);
  return it == counts_.end() ? 0 : it->second.count;
}

int64_t AdmissionCounts::add(const CacheKey& line, uint32_t day, size_t cap) {
  Entry& e = counts_[line];
  if (e.count < UINT32_MAX) ++e.count;
  e.day = day;
  const int64_t n = e.count;
  if (counts_.size() > cap) {
    // Drop the entries seen longest ago (one pass: rare, and the map is small).
    std::vector<uint32_t> days;
    days.reserve(counts_.size());
    for (const auto& [k, v] : counts_) days.push_back(v.day);
    const size_t drop = counts_.size() - cap;
    std::nth_element(days.begin(), days.begin() + drop, days.end());
    const uint32_t cut = days[drop];
    std::erase_if(counts_, [&](const auto& kv) { return kv.second.day < cut && kv.first != line; });
  }
  return n;
}

std::vector<std::byte> AdmissionCounts::encode() const {
  // Sorted by key, so the same counts always encode to the same bytes.
  std::vector<std::pair<CacheKey, Entry>> rows(counts_.begin(), counts_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.first.hi != b.first.hi ? a.first.hi < b.first.hi : a.first.lo < b.first.lo;
  });
  std::vector<std::byte> out(rows.size() * kRecordBytes);
  std::byte* p = out.data();
  for (const auto& [k, e] : rows) {
    put_u64le(p, k.lo);
    put_u64le(p + 8, k.hi);
    put_u32le(p + 16, e.count);
    put_u32le(p + 20, e.day);
    p += kRecordBytes;
  }
  return out;
}

core::Status AdmissionCounts::decode(std::span<const std::byte> bytes) {
  if (bytes.size() % kRecordBytes != 0)
    return core::Status::corruption(core::Reason::kLengthRange,
                                    "admission counts: not a whole number of records");
  counts_.clear();
  for (size_t off = 0; off < bytes.size(); off += kRecordBytes) {
    const std::byte* p = bytes.data() + off;
    CacheKey k{get_u64le(p), get_u64le(p + 8)};
    counts_[k] = Entry{get_u32le(p + 16), get_u32le(p + 20)};
  }
  return core::Status::ok();
}

AdmissionPlan admit(const AdmissionRequest& req, int64_t grid, const DiskAdmissionOptions& opts,
                    AdmissionCounts* counts) {
  const int64_t m = int64_t(req.prompt.size());
  const int64_t r = req.resume_at;
  // Count every line the prefill forwards cold: (r, m], on the grid.
  PrefixHasher hasher("");  // the counts outlive a fingerprint: no fingerprint in their keys
  std::vector<std::pair<int64_t, int64_t>> lines;  // (line, its count after this read)
  for (int64_t b = grid; b <= m; b += grid) {
    hasher.feed(req.prompt.subspan(size_t(b - grid), size_t(grid)));
    if (b <= r) continue;
    lines.emplace_back(b, counts->add(hasher.key(), req.day, opts.max_counted_lines));
  }
  AdmissionPlan plan;
  if (m < opts.min_tokens || !req.exact) return plan;
  // Anchors are taken as the prefill passes them: strictly after the resume point, before the
  // prompt's end (the last token's logits need a prefill), on untainted rows.
  const int64_t top = std::min(m - 1, req.taint);
  const int64_t head_end = std::min(req.head_end, m);
  std::set<int64_t> want;
  auto usable = [&](int64_t p) { return p > r && p <= top; };
  // The longest line read cold admit_after times.
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->second >= opts.admit_after && usable(it->first)) {
      want.insert(it->first);
      break;
    }
  // Branches: repeated lines whose next line was read fewer times, in the head.
  int branches = 0;
  for (size_t i = lines.size(); i-- > 0 && branches < opts.branch_max;) {
    const auto [b, c] = lines[i];
    if (c < opts.admit_after || b > head_end || !usable(b)) continue;
    const int64_t next = i + 1 < lines.size() ? lines[i + 1].second : 0;
    if (next < c) {
      want.insert(b);
      ++branches;
    }
  }
  // A session's first long request: its head, and its last token.
  if (req.first_of_session) {
    int heads = 0;
    for (int64_t b = head_end / grid * grid; b > 0 && heads < opts.head_anchors; b -= grid) {
      if (usable(b)) want.insert(b);
      ++heads;
    }
    if (usable(m - 1)) want.insert(m - 1);
  }
  plan.anchors.assign(want.begin(), want.end());
  return plan;
}

}  // namespace anchorage::cache

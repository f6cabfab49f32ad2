#include "cache/anchor_set.h"

#include <algorithm>

namespace anchorage::cache {

void AnchorSet::put(SectionCopy state) {
  const int64_t pos = state.position();
  auto it = anchors_.find(pos);
  if (it != anchors_.end()) erase(it);
  bytes_ += state.bytes();
  anchors_[pos] = Entry{std::move(state), next_seq_++};
  while (bytes_ > budget_bytes_) {
    const int64_t victim = oldest(keep_newest_);
    if (victim < 0) break;
    erase(anchors_.find(victim));
    ++evicted_;
  }
}

const SectionCopy* AnchorSet::largest_at_or_below(int64_t pos) const {
  auto it = anchors_.upper_bound(pos);
  if (it == anchors_.begin()) return nullptr;
  return &std::prev(it)->second.state;
}

const SectionCopy* AnchorSet::at(int64_t pos) const {
  auto it = anchors_.find(pos);
  return it == anchors_.end() ? nullptr : &it->second.state;
}

SectionCopy AnchorSet::take(int64_t pos) {
  auto it = anchors_.find(pos);
  if (it == anchors_.end()) return SectionCopy();
  SectionCopy out = std::move(it->second.state);
  bytes_ -= out.bytes();
  anchors_.erase(it);
  return out;
}

void AnchorSet::drop_above(int64_t pos) {
  for (auto it = anchors_.upper_bound(pos); it != anchors_.end();) erase(it++);
}

void AnchorSet::clear() {
  anchors_.clear();
  bytes_ = 0;
}

std::vector<int64_t> AnchorSet::positions() const {
  std::vector<int64_t> out;
  out.reserve(anchors_.size());
  for (const auto& [pos, e] : anchors_) out.push_back(pos);
  return out;
}

int64_t AnchorSet::shed(int64_t want) {
  int64_t freed = 0;
  while (freed < want && !anchors_.empty()) {
    // The budget's order, and the newest last.
    int64_t victim = oldest(keep_newest_);
    if (victim < 0) victim = oldest(0);
    const int64_t before = bytes_;
    erase(anchors_.find(victim));
    freed += before - bytes_;
  }
  return freed;
}

int64_t AnchorSet::oldest(int protect) const {
  if (int64_t(anchors_.size()) <= protect) return -1;
  // The newest `protect` by seq are off limits: find the protect-th largest seq.
  std::vector<uint64_t> seqs;
  seqs.reserve(anchors_.size());
  for (const auto& [pos, e] : anchors_) seqs.push_back(e.seq);
  std::sort(seqs.begin(), seqs.end());
  const uint64_t limit = protect > 0 ? seqs[seqs.size() - size_t(protect)] : UINT64_MAX;
  int64_t best = -1;
  bool best_head = true;
  uint64_t best_seq = UINT64_MAX;
  for (const auto& [pos, e] : anchors_) {
    if (e.seq >= limit) continue;
    const bool head = is_head(pos);
    // A non-head anchor beats a head one; then the older wins.
    if (best < 0 || (best_head && !head) || (head == best_head && e.seq < best_seq)) {
      best = pos;
      best_head = head;
      best_seq = e.seq;
    }
  }
  return best;
}

bool AnchorSet::is_head(int64_t pos) const {
  return head_stride_ > 0 && pos % head_stride_ == 0 && pos <= head_stride_ * head_count_;
}

void AnchorSet::erase(std::map<int64_t, Entry>::iterator it) {
  bytes_ -= it->second.state.bytes();
  anchors_.erase(it);
}

}  // namespace anchorage::cache

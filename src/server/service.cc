#include "server/service.h"

namespace anchorage::server {

void ResponseTracker::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  ++active_;
}

void ResponseTracker::end() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
  }
  cv_.notify_all();
}

void ResponseTracker::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return active_ == 0; });
}

size_t ResponseTracker::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

uint64_t next_request_nonce(Service& svc) {
  // SplitMix64 of base + counter: distinct per request, unpredictable enough for ids.
  uint64_t z = svc.nonce_base + 0x9e3779b97f4a7c15ull * (svc.next_request.fetch_add(1) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace anchorage::server

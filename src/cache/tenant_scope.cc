#include "cache/tenant_scope.h"

#include <algorithm>
#include <vector>

namespace anchorage::cache {
namespace {

// The tenant salts the key: "tenant:" keeps it apart from the disk tier's fingerprints.
std::string salt(std::string_view tenant) {
  return "tenant:" + std::string(tenant);
}

}  // namespace

TenantLedger::TenantLedger(size_t max_keys) : max_keys_(std::max<size_t>(max_keys, 1)) {}

void TenantLedger::record(std::string_view tenant, std::span<const int32_t> tokens,
                          std::span<const int64_t> lengths) {
  std::vector<int64_t> sorted(lengths.begin(), lengths.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  PrefixHasher h(salt(tenant));
  for (const int64_t len : sorted) {
    if (len < 1 || len > int64_t(tokens.size())) continue;
    h.feed(tokens.subspan(size_t(h.fed()), size_t(len - h.fed())));
    const CacheKey k = h.key();
    if (auto it = keys_.find(k); it != keys_.end()) {
      order_.splice(order_.end(), order_, it->second);
      continue;
    }
    keys_.emplace(k, order_.insert(order_.end(), k));
    if (order_.size() > max_keys_) {
      keys_.erase(order_.front());
      order_.pop_front();
    }
  }
}

bool TenantLedger::made(std::string_view tenant, std::span<const int32_t> tokens) const {
  return keys_.contains(prefix_key(salt(tenant), tokens));
}

void TenantLedger::clear() {
  keys_.clear();
  order_.clear();
}

bool OfferScope::allows(std::span<const int32_t> prompt, int64_t resume_at) const {
  if (ledger_ == nullptr) return true;
  if (resume_at <= 0 || resume_at > int64_t(prompt.size())) return false;
  return ledger_->made(tenant_, prompt.first(size_t(resume_at)));
}

}  // namespace anchorage::cache

// TenantLedger and OfferScope: the one mechanism that keeps the cache tiers of one server from
// offering one tenant's state to another (--cache-scope tenant; docs/cache.md "Tenants").
//
// Every state any tier holds (an anchor, the end anchor, a pinned head, a parked session, a
// store snapshot, a disk anchor, a spilled conversation, a response) covers a token prefix
// that some request's prefill or generation made. The ledger records, for each tenant, a
// salted key of every prefix its own requests made a state of (prefix_key with the tenant as
// the salt). The Planner is the only code that asks a tier for an offer, and it takes an
// offer only when OfferScope::allows says the asking tenant made that state itself; otherwise
// it asks the same tier again below that position (Planner::plan). So a tenant is offered
// exactly what its own requests would have left, whatever another tenant sent: usage,
// /v1/cache/peek and the rows in place say nothing about other tenants' prompts.
//
// Under --cache-scope global the scope has no ledger and allows every offer (today's sharing).
// The ledger lives in RAM: after a restart no tenant owns what the disk tier and the spill kept,
// so they are not offered until the tenant's own requests make them again.
//
// Thread safety: none; the engine thread owns the ledger, like the tiers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/cache_key.h"

namespace anchorage::cache {

class TenantLedger {
 public:
  // Keys beyond max_keys forget the least recently recorded (a forgotten state is only not
  // offered); recording a key again makes it the most recent.
  explicit TenantLedger(size_t max_keys = size_t(1) << 18);

  // The tenant's request made states of tokens.first(len) for each len in lengths (any
  // order; lengths outside [1, tokens.size()] are ignored).
  void record(std::string_view tenant, std::span<const int32_t> tokens,
              std::span<const int64_t> lengths);
  // True when the tenant recorded a state of exactly these tokens.
  bool made(std::string_view tenant, std::span<const int32_t> tokens) const;
  void clear();
  size_t size() const { return keys_.size(); }

 private:
  size_t max_keys_;
  std::list<CacheKey> order_;  // least recently recorded first
  std::unordered_map<CacheKey, std::list<CacheKey>::iterator, CacheKeyHash> keys_;
};

// Who asks for an offer. Planner::plan and everything that serves another request's tokens
// (the response cache, the rows policy's alignment) take one.
class OfferScope {
 public:
  // --cache-scope global (or no keys): every offer.
  static OfferScope global() { return OfferScope(nullptr, {}); }
  // --cache-scope tenant: only states `tenant` made (ledger must outlive the scope).
  static OfferScope tenant(const TenantLedger& ledger, std::string_view tenant) {
    return OfferScope(&ledger, tenant);
  }

  // May a state covering prompt.first(resume_at) be offered?
  bool allows(std::span<const int32_t> prompt, int64_t resume_at) const;
  bool partitioned() const { return ledger_ != nullptr; }

 private:
  OfferScope(const TenantLedger* ledger, std::string_view tenant)
      : ledger_(ledger), tenant_(tenant) {}
  const TenantLedger* ledger_;
  std::string_view tenant_;
};

}  // namespace anchorage::cache

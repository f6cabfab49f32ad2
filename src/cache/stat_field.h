// StatKind: what one field of a tier's stats struct is, so the JSON of /v1/cache/stats, the
// Prometheus text of /metrics and /health are all written from one list of fields.
//
// Every tier's stats struct (ResidentStats, StateStoreStats, ResponseCacheStats, BudgetStats)
// has `template <class F> void visit(F&& f) const`, which calls f(name, value, kind) once per
// field, in a stable order. A field is named only there.
#pragma once

#include <cstdint>

namespace anchorage::cache {

enum class StatKind : uint8_t {
  kGauge,    // a level that goes up and down (bytes held, entries, a position)
  kCounter,  // a count since start that only grows (Prometheus adds _total)
};

}  // namespace anchorage::cache

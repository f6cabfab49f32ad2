// The Unicode data behind unicode_nfc.h, generated into unicode_nfc_tables.cc by
// scripts/gen_unicode_nfc_tables.py (its Unicode version is kUnicodeVersion). Read-only
// constant data: any thread may read it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::text::nfc_tables {

// Code points first..last (inclusive) have canonical combining class ccc (never 0 here).
struct CccRange {
  uint32_t first;
  uint32_t last;
  uint8_t ccc;
};

// One level of a canonical decomposition: cp -> first [second]; second is 0 for a singleton.
// Sorted by cp; Hangul syllables are not listed (they decompose arithmetically).
struct Decomposition {
  uint32_t cp;
  uint32_t first;
  uint32_t second;
};

// A primary composite: first + second compose to composite. Sorted by (first, second).
struct Composition {
  uint32_t first;
  uint32_t second;
  uint32_t composite;
};

extern const char kUnicodeVersion[];
extern const CccRange kCccRanges[];
extern const size_t kCccRangeCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;
extern const Composition kCompositions[];
extern const size_t kCompositionCount;

}  // namespace anchorage::text::nfc_tables

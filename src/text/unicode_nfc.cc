#include "text/unicode_nfc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/check.h"
#include "text/unicode_nfc_tables.h"
#include "text/utf8.h"

namespace anchorage::text {

namespace {

namespace t = nfc_tables;

// Hangul syllables compose and decompose arithmetically (Unicode §3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

constexpr char32_t kMaxCodePoint = 0x10FFFF;

// One bit per code point: set when the character may change under NFC or change its
// neighbour: a nonzero combining class, a canonical decomposition, or being the second half
// of a composition. A character whose bit is clear is "inert": NFC never touches it and
// never reaches across it, so text splits there into pieces normalized on their own.
class InertSet {
 public:
  InertSet() : bits_((kMaxCodePoint + 1) / 64, 0) {
    for (size_t i = 0; i < t::kCccRangeCount; ++i) {
      for (char32_t c = t::kCccRanges[i].first; c <= t::kCccRanges[i].last; ++c) mark(c);
    }
    for (size_t i = 0; i < t::kDecompositionCount; ++i) mark(t::kDecompositions[i].cp);
    for (size_t i = 0; i < t::kCompositionCount; ++i) mark(t::kCompositions[i].second);
    for (char32_t c = kVBase; c < kVBase + kVCount; ++c) mark(c);
    for (char32_t c = kTBase + 1; c < kTBase + kTCount; ++c) mark(c);
  }
  bool inert(char32_t c) const { return ((bits_[c >> 6] >> (c & 63)) & 1) == 0; }

 private:
  void mark(char32_t c) { bits_[c >> 6] |= uint64_t{1} << (c & 63); }
  std::vector<uint64_t> bits_;
};

const InertSet& inert_set() {
  static const InertSet set;
  return set;
}

uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;
  const t::CccRange* end = t::kCccRanges + t::kCccRangeCount;
  const t::CccRange* r = std::upper_bound(
      t::kCccRanges, end, c, [](char32_t v, const t::CccRange& x) { return v < x.first; });
  if (r == t::kCccRanges) return 0;
  --r;
  return c <= r->last ? r->ccc : 0;
}

void decompose(char32_t c, std::vector<char32_t>* out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
    return;
  }
  const t::Decomposition* end = t::kDecompositions + t::kDecompositionCount;
  const t::Decomposition* d = std::lower_bound(
      t::kDecompositions, end, c, [](const t::Decomposition& x, char32_t v) { return x.cp < v; });
  if (d == end || d->cp != c) {
    out->push_back(c);
    return;
  }
  decompose(d->first, out);
  if (d->second != 0) decompose(d->second, out);
}

// The primary composite of first + second, or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 &&
      second > kTBase && second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const t::Composition* end = t::kCompositions + t::kCompositionCount;
  const t::Composition* p =
      std::lower_bound(t::kCompositions, end, std::make_pair(first, second),
                       [](const t::Composition& x, const std::pair<char32_t, char32_t>& v) {
                         return x.first != v.first ? x.first < v.first : x.second < v.second;
                       });
  if (p == end || p->first != first || p->second != second) return 0;
  return p->composite;
}

// Full NFC of a piece that starts with an inert character or at the start of the text and
// ends before an inert character or at the end (UAX #15 §1.3: decompose, put marks in
// canonical order, compose).
void normalize_piece(std::string_view piece, std::vector<char32_t>* buf, std::string* out) {
  buf->clear();
  for (size_t i = 0; i < piece.size();) {
    const Utf8Scan c = utf8_scan(piece, i);
    ANCHORAGE_CHECK(c.kind == Utf8Scan::kValid);
    decompose(c.cp, buf);
    i += c.n_bytes;
  }
  std::vector<char32_t>& b = *buf;
  // Canonical ordering: a stable sort by combining class of each run of non-starters.
  for (size_t i = 0; i < b.size();) {
    if (combining_class(b[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < b.size() && combining_class(b[j]) != 0) ++j;
    std::stable_sort(b.begin() + i, b.begin() + j, [](char32_t x, char32_t y) {
      return combining_class(x) < combining_class(y);
    });
    i = j;
  }
  // Canonical composition: each character joins the last starter unless something between
  // them blocks it (a starter, or a mark of the same or a higher class).
  size_t starter = SIZE_MAX;
  uint8_t last_ccc = 0;
  size_t w = 0;
  for (size_t r = 0; r < b.size(); ++r) {
    const char32_t c = b[r];
    const uint8_t ccc = combining_class(c);
    if (starter != SIZE_MAX) {
      const bool adjacent = w == starter + 1;
      const bool blocked = !adjacent && (last_ccc == 0 || last_ccc >= ccc);
      if (!blocked) {
        const char32_t composite = compose(b[starter], c);
        if (composite != 0) {
          b[starter] = composite;
          continue;
        }
      }
    }
    if (ccc == 0) starter = w;
    last_ccc = ccc;
    b[w++] = c;
  }
  for (size_t i = 0; i < w; ++i) utf8_append(b[i], out);
}

// Bytes below 0xCC only start characters below U+0300, which are all inert.
bool below_u0300(std::string_view text) {
  for (char ch : text) {
    if (static_cast<uint8_t>(ch) >= 0xCC) return false;
  }
  return true;
}

}  // namespace

bool nfc_quick_check(std::string_view text) {
  if (below_u0300(text)) return true;
  const InertSet& set = inert_set();
  for (size_t i = 0; i < text.size();) {
    const Utf8Scan c = utf8_scan(text, i);
    if (c.kind != Utf8Scan::kValid || !set.inert(c.cp)) return false;
    i += c.n_bytes;
  }
  return true;
}

void nfc_append(std::string_view text, std::string* out) {
  if (below_u0300(text)) {
    out->append(text);
    return;
  }
  const InertSet& set = inert_set();
  std::vector<char32_t> buf;
  size_t copied = 0;   // text[0, copied) is in out
  size_t piece = 0;    // where the current piece starts (at its inert character)
  bool dirty = false;  // the current piece holds a character that may change
  auto flush = [&](size_t end) {
    if (dirty) {
      out->append(text.data() + copied, piece - copied);
      normalize_piece(text.substr(piece, end - piece), &buf, out);
      copied = end;
      dirty = false;
    }
  };
  for (size_t i = 0; i < text.size();) {
    const Utf8Scan c = utf8_scan(text, i);
    ANCHORAGE_CHECK(c.kind == Utf8Scan::kValid);
    if (set.inert(c.cp)) {
      flush(i);
      piece = i;
    } else {
      dirty = true;
    }
    i += c.n_bytes;
  }
  flush(text.size());
  out->append(text.data() + copied, text.size() - copied);
}

const char* nfc_unicode_version() {
  return nfc_tables::kUnicodeVersion;
}

}  // namespace anchorage::text

// The constants of the cache file format, shared by CacheFileWriter and CacheFile. Every byte
// is specified in docs/formats/disk-tier.md: change a constant or the layout there and here in
// the same commit, with kCacheFileVersion bumped (tests/golden/ keeps one file per version).
#pragma once

#include <cstdint>

namespace anchorage::cache {

// Bytes 0..7 of every cache file.
inline constexpr char kCacheFileMagic[8] = {'A', 'N', 'C', 'H', 'C', 'A', 'C', 'H'};
inline constexpr uint32_t kCacheFileVersion = 1;

// The unit of the header and of every section's alignment (O_DIRECT's block).
inline constexpr uint64_t kCacheFileAlign = 4096;

// Fixed fields of the header's first line (offsets in bytes, all little-endian u32).
inline constexpr uint64_t kOffMagic = 0;
inline constexpr uint64_t kOffVersion = 8;
inline constexpr uint64_t kOffKind = 12;
inline constexpr uint64_t kOffHeaderLength = 16;
inline constexpr uint64_t kOffMetaLength = 20;
inline constexpr uint64_t kOffHeaderCrc = 24;
inline constexpr uint64_t kOffReserved = 28;
inline constexpr uint64_t kOffMeta = 32;

// A header holds at most this much (256 lines): a chunk's 1,024 token ids in JSON take about
// 8 KiB, an anchor of a long head lists its chunks' keys; anything longer is not ours.
inline constexpr uint64_t kMaxHeaderLength = 256 * kCacheFileAlign;
// Sections per file: a model's views or sections (the qwen35 layouts have 2).
inline constexpr uint64_t kMaxSections = 1024;

enum class CacheFileKind : uint32_t {
  kChunk = 1,          // rows [begin, end) of every view and those token ids
  kAnchor = 2,         // every section at one position, with the keys of the chunks below it
  kCounts = 3,         // the admission counts (traffic: line hashes and how often read cold)
  kWrites = 4,         // the write guard's bytes written per day
  kSpillManifest = 5,  // a session spill entry: its token ids, blocks, anchors and sums
  kSpillBlock = 6,     // rows [begin, end) of every view as spill codec frames, and the ids
};

constexpr uint64_t round_up_to_align(uint64_t n) {
  return (n + kCacheFileAlign - 1) / kCacheFileAlign * kCacheFileAlign;
}

}  // namespace anchorage::cache

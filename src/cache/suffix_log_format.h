// The constants of the suffix store's log file (`<cache dir>/suffix/tokens.log`). Every byte is
// specified in docs/suffix-store.md "On-disk format": change a constant or the layout there
// and here in the same commit, with kSuffixLogVersion bumped.
#pragma once

#include <cstdint>

namespace anchorage::cache {

inline constexpr char kSuffixLogMagic[8] = {'A', 'N', 'C', 'H', 'S', 'U', 'F', 'X'};
inline constexpr uint32_t kSuffixLogVersion = 1;

// Header fields (offsets in bytes; integers little-endian).
inline constexpr uint64_t kSufOffMagic = 0;
inline constexpr uint64_t kSufOffVersion = 8;
inline constexpr uint64_t kSufOffHeaderLength = 12;
inline constexpr uint64_t kSufOffTokenizerSha = 16;  // 32 bytes: the tokenizer's sha256
inline constexpr uint64_t kSufOffReserved = 48;      // 12 zero bytes
inline constexpr uint64_t kSufOffHeaderCrc = 60;     // masked crc32c of bytes [0, 60)
inline constexpr uint64_t kSuffixLogHeaderBytes = 64;

// A record: u32 token count, u32 masked crc32c of (the count's 4 bytes, the ids' bytes), then
// the ids as u32.
inline constexpr uint64_t kSuffixRecordHeaderBytes = 8;
// One request's prompt and output; anything longer is not ours.
inline constexpr uint32_t kMaxSuffixRecordTokens = 1u << 24;

inline constexpr const char* kSuffixDirName = "suffix";
inline constexpr const char* kSuffixLogName = "tokens.log";

}  // namespace anchorage::cache

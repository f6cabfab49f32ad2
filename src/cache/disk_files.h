// The disk tier's two kinds of state file (docs/formats/disk-tier.md "Chunk files", "Anchor
// files") on top of the cache file format:
//   - a chunk file holds rows [begin, end) of every view and those token ids, keyed by the hash
//     of the whole prefix up to `end`; `prev` names the chunk below it (zero key at row 0);
//   - an anchor file holds every section at `position`, keyed the same way, with the keys of
//     the chunks below it, bottom up (the last one ends at `position`).
// Reading checks the fingerprint and the layout against this engine's, the stored token ids
// against the prompt's and every section's crc before a byte is handed over.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cache/blob_store.h"
#include "cache/cache_file.h"
#include "cache/cache_key.h"
#include "cache/state_copy.h"
#include "core/state_layout.h"
#include "core/status.h"

namespace anchorage::cache {

struct ChunkInfo {
  CacheKey key;
  CacheKey prev;  // the chunk that ends at `begin` (zero at 0)
  int64_t begin = 0;
  int64_t end = 0;
  uint64_t bytes = 0;  // the file's size
};

struct AnchorInfo {
  CacheKey key;
  int64_t position = 0;
  std::vector<CacheKey> chunks;  // bottom up; the last one ends at position
  int64_t written_s = 0;         // wall-clock seconds when it was written
  uint64_t bytes = 0;
};

// Blob names: the key's hex and the kind.
std::string chunk_name(const CacheKey& key);
std::string anchor_name(const CacheKey& key);
// Parses a blob name back; false for anything else (the admission file, strays).
bool parse_blob_name(const std::string& name, CacheKey* key, bool* is_anchor);

core::Status put_chunk(BlobStore& store, const std::string& fingerprint, const ChunkInfo& info,
                       std::span<const int32_t> tokens, const RowCopy& rows,
                       const core::StateLayout& layout);
core::Status put_anchor(BlobStore& store, const std::string& fingerprint, const AnchorInfo& info,
                        const SectionCopy& sections, const core::StateLayout& layout);

// The header's facts, checked against this engine (Corruption with kFingerprint or kLayout
// when the file is another engine's). `file` must be a chunk (anchor) file.
core::Result<ChunkInfo> chunk_info(const CacheFile& file, const std::string& fingerprint,
                                   const core::StateLayout& layout);
core::Result<AnchorInfo> anchor_info(const CacheFile& file, const std::string& fingerprint,
                                     const core::StateLayout& layout);

// The chunk's rows into `rows` (allocated for [begin, end) of `layout`), after its token ids
// were compared with `prompt_tokens` (the prompt's [begin, end)): Corruption when they differ
// (kLayout: the key collided or the file lies) or a section fails its crc.
core::Status read_chunk_rows(const CacheFile& file, const ChunkInfo& info,
                             std::span<const int32_t> prompt_tokens, RowCopy* rows);
core::Status read_anchor_sections(const CacheFile& file, SectionCopy* sections);

}  // namespace anchorage::cache

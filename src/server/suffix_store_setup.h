// open_suffix_store: the persistent suffix store a server runs (docs/suffix-store.md), in
// <cache dir>/suffix, named by the tokenizer's sha256 (tokenizer_sha256: its vocabulary, id by
// id, so a tokenizer read from a GGUF file and the same one from tokenizer.json agree).
#pragma once

#include <memory>
#include <string>

#include "cache/suffix_store.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "core/status.h"
#include "text/tokenizer.h"

namespace anchorage::server {

// The store and, when it writes, the lock that keeps a second writer out of its directory.
struct OpenSuffixStore {
  std::unique_ptr<core::FileLock> lock;  // null when read-only
  std::unique_ptr<cache::SuffixStore> store;
};

// Every id's bytes and whether it is special, in id order.
core::Sha256Digest tokenizer_sha256(const text::Tokenizer& tokenizer);

// Fails with Unavailable when another process writes to the store, with Corruption/kFingerprint
// when it was written for another tokenizer (the file untouched), with IOError when the file
// system fails.
core::Result<OpenSuffixStore> open_suffix_store(core::Fs& fs, const std::string& cache_dir,
                                                const text::Tokenizer& tokenizer,
                                                const cache::SuffixStoreOptions& options);

}  // namespace anchorage::server

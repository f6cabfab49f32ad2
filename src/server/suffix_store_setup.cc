#include "server/suffix_store_setup.h"

#include <cstdint>

#include "cache/suffix_log_format.h"

namespace anchorage::server {

core::Sha256Digest tokenizer_sha256(const text::Tokenizer& tokenizer) {
  core::Sha256 h;
  auto put_u32 = [&h](uint32_t v) {
    const uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    h.update(std::as_bytes(std::span(b)));
  };
  put_u32(uint32_t(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const std::string_view bytes = tokenizer.token_bytes(id);
    put_u32(uint32_t(bytes.size()) | (tokenizer.is_special(id) ? 0x80000000u : 0u));
    h.update(bytes);
  }
  return h.finish();
}

core::Result<OpenSuffixStore> open_suffix_store(core::Fs& fs, const std::string& cache_dir,
                                                const text::Tokenizer& tokenizer,
                                                const cache::SuffixStoreOptions& options) {
  OpenSuffixStore out;
  if (!options.read_only) {
    // One writer per store: two would interleave records in one log. Readers need no lock.
    const std::string dir = core::path_join(cache_dir, cache::kSuffixDirName);
    if (core::Status s = fs.create_dir(dir); !s.is_ok()) return s;
    auto lock = fs.lock(core::path_join(dir, "lock"));
    if (!lock) return lock.error().with_prefix("another server writes this suffix store: ");
    out.lock = std::move(*lock);
  }
  auto store = cache::SuffixStore::open(fs, cache_dir, tokenizer_sha256(tokenizer), options);
  if (!store) return store.error();
  out.store = std::move(*store);
  return out;
}

}  // namespace anchorage::server

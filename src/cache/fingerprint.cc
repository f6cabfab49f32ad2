#include "cache/fingerprint.h"

#include <gnu/libc-version.h>
#include <xxhash.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "core/sha256.h"
#include "engine/engine.h"

namespace anchorage::cache {

namespace {

using nlohmann::json;

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

// The offsets of the sampled reads of a file of `size` bytes (> kWholeHashBytes): the first
// MiB, kSpreadSamples MiB evenly between, the last MiB.
std::vector<uint64_t> sample_offsets(uint64_t size) {
  std::vector<uint64_t> at;
  const uint64_t last = size - kSampleBytes;
  at.push_back(0);
  for (int i = 1; i <= kSpreadSamples; ++i) at.push_back(last / (kSpreadSamples + 1) * i);
  at.push_back(last);
  return at;
}

}  // namespace

core::Result<json> file_identity(core::Fs& fs, const std::string& path) {
  auto file = fs.open_read(path);
  if (!file) return file.error();
  const uint64_t size = (*file)->size();
  const bool sampled = size > kWholeHashBytes;
  // 4 KiB-aligned, so PosixFs reads straight into it.
  std::unique_ptr<std::byte, FreeDeleter> buf(
      static_cast<std::byte*>(std::aligned_alloc(4096, kSampleBytes)));
  core::Sha256 h;
  auto read = [&](uint64_t off, uint64_t n) -> core::Status {
    auto got = (*file)->read_at(off, std::span(buf.get(), size_t(n)));
    if (!got) return got.error();
    if (*got != n) return core::Status::io_error("short read of " + path);
    h.update(std::span<const std::byte>(buf.get(), size_t(n)));
    return core::Status::ok();
  };
  if (sampled) {
    // The size goes in too: two files that agree on every sample but differ in length differ.
    const std::string size_text = std::to_string(size) + ":";
    h.update(size_text);
    for (uint64_t off : sample_offsets(size))
      if (core::Status s = read(off, kSampleBytes); !s.is_ok()) return s;
  } else {
    for (uint64_t off = 0; off < size; off += kSampleBytes)
      if (core::Status s = read(off, std::min(kSampleBytes, size - off)); !s.is_ok()) return s;
  }
  const core::Sha256Digest d = h.finish();
  return json{{"bytes", size}, {"sha256", core::to_hex(d)}, {"sampled", sampled}};
}

core::Result<Fingerprint> compute_fingerprint(core::Fs& fs, const FingerprintInputs& in) {
  if (!in.manifest.is_object() || in.manifest.empty())
    return core::Status::invalid_argument("fingerprint: the model manifest is empty");
  if (in.grid_tokens <= 0) return core::Status::invalid_argument("fingerprint: no grid");
  json weights;
  if (!in.weights.file.empty()) {
    auto id = file_identity(fs, in.weights.file);
    if (!id) return id.error().with_prefix("fingerprint: weights: ");
    weights = json{{"file", *id}};
  } else if (!in.weights.preset.empty()) {
    // Generated weights are (preset, seed): the generator (model/qwen35/tensors.cc, core/rng.h)
    // is in kKernelVersion's golden list, so a generator change bumps the manifest instead of
    // every start hashing GBs of generated weights (docs/disk-tier.md).
    weights = json{{"preset", in.weights.preset}, {"seed", in.weights.seed}};
  } else {
    return core::Status::invalid_argument("fingerprint: no weights file and no preset");
  }
  Fingerprint fp;
  fp.parts = json{
      {"formula", kFingerprintFormula},
      {"weights", weights},
      {"model", in.manifest},
      {"grid_tokens", in.grid_tokens},
      // Outside code that computes rows: libm's cosf/sinf/powf build the RoPE tables and log1pf
      // the softplus; glibc has replaced such functions between releases (CORE-MATH), so a
      // libc upgrade may change rows. Nothing else from outside enters the arithmetic: the
      // exp is our own, sqrt is IEEE-exact, ISA-L/OpenSSL/xxhash only check or name bytes.
      {"libraries", json{{"libc", gnu_get_libc_version()}}},
  };
  const std::string canonical = fp.parts.dump();
  const XXH128_hash_t h = XXH3_128bits(canonical.data(), canonical.size());
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  fp.hex = core::to_hex(std::span<const uint8_t>(c.digest, sizeof c.digest));
  return fp;
}

core::Result<Fingerprint> compute_fingerprint(core::Fs& fs, const engine::Engine& engine,
                                              const WeightsOrigin& weights) {
  FingerprintInputs in;
  in.manifest = engine.architecture().manifest();
  in.grid_tokens = engine.grid().anchor_spacing;
  in.weights = weights;
  return compute_fingerprint(fs, in);
}

}  // namespace anchorage::cache

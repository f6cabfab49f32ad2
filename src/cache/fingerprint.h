// Fingerprint: what makes stored rows valid, and nothing else (issue 10 §3; docs/disk-tier.md
// "The fingerprint" says what counts and why). Every cache file carries the fingerprint it was
// written under; a file of another fingerprint holds rows of other arithmetic or other weights
// and is swept at start. It is a 128-bit hash of a canonical JSON object, `parts`:
//   weights     a file by content (size + sha256, sampled past 64 MiB), or generated weights by
//               (preset, seed) — their generator is code under kKernelVersion's golden list
//   model       Architecture::manifest(): config, dtypes, KV dtype, exact granularity, the
//               kernel ISA in use, kKernelVersion
//   grid_tokens the tier's grid G (chunk files hold rows [b - G, b))
//   libraries   versions of code outside this repository that computes rows: the C library's
//               libm (RoPE tables, softplus)
//   formula     this formula's version
//
// Computed once at start-up (a weights file is read, up to 18 MiB of it); a value afterwards.
// Threading: compute_fingerprint may run on any thread; it reads the weights through `fs`.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/status.h"

namespace anchorage::engine {
class Engine;
}

namespace anchorage::cache {

struct Fingerprint {
  std::string hex;       // 32 lower-case hex chars: XXH3-128 of parts.dump()
  nlohmann::json parts;  // what went in (keys sorted, so dump() is canonical)
};

// Where the model's weights come from: a file, or a generator.
struct WeightsOrigin {
  std::string file;  // a weights file (GGUF), identified by content, never by path; wins if set
  // Generated weights (file == ""): the preset's name and the seed.
  std::string preset;
  uint64_t seed = 0;
};

struct FingerprintInputs {
  nlohmann::json manifest;  // model::Architecture::manifest()
  int64_t grid_tokens = 0;  // the disk tier's grid G
  WeightsOrigin weights;
};

// The version of the formula below; a change to what enters `parts` bumps it.
inline constexpr int kFingerprintFormula = 1;

core::Result<Fingerprint> compute_fingerprint(core::Fs& fs, const FingerprintInputs& in);
// The usual call at start-up: the engine's architecture and its anchor grid.
core::Result<Fingerprint> compute_fingerprint(core::Fs& fs, const engine::Engine& engine,
                                              const WeightsOrigin& weights);

// A weights file by content: {"bytes": size, "sha256": hex, "sampled": bool}. Files over
// kWholeHashBytes hash their size, their first and last MiB and 16 MiB-reads spread evenly
// between (the seed's rule: a 50 GB checkpoint is not read whole at every start).
core::Result<nlohmann::json> file_identity(core::Fs& fs, const std::string& path);
inline constexpr uint64_t kWholeHashBytes = uint64_t{64} << 20;
inline constexpr uint64_t kSampleBytes = uint64_t{1} << 20;
inline constexpr int kSpreadSamples = 16;

}  // namespace anchorage::cache

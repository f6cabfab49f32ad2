// ServedModel: the model the server runs — the tokenizer, one Engine over a qwen35 model with
// random weights from a preset (real weights come with GGUF loading, later), and the stop ids.
// The preset's vocabulary is padded to cover the tokenizer, so every id the tokenizer makes
// is a row of the embedding (the `tiny` preset has 512 ids; Qwen3's tokenizer 151,669).
//
// Thread safety: the tokenizer is shared by every HTTP thread (const, thread-safe); the
// engine belongs to the engine queue's thread once the server runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/fingerprint.h"
#include "core/dtype.h"
#include "core/status.h"
#include "engine/engine.h"
#include "text/tokenizer.h"

namespace anchorage::server {

struct ModelSpec {
  std::string preset = "small";  // model/qwen35/config.h presets
  uint64_t seed = 1;             // of the random weights
  core::DType weight_dtype = core::DType::kF32;
  core::DType kv_dtype = core::DType::kBF16;  // docs/http-api.md "--kv-dtype": why bf16
  int64_t capacity = 32768;  // context tokens (opencode's traces ask for a 32k window)
  int threads = 0;           // engine threads; 0 = every hardware thread
  // The engine's state lines: every body anchor and store prefix line is a multiple of it
  // (serve sets the gcd of --anchor-spacing and --prefix-chunk).
  int64_t anchor_spacing = 1024;
  std::string tokenizer_json;  // path of the HF tokenizer.json
  // A GGUF model file (docs/gguf.md): when set, the model, and the tokenizer when the file has
  // one, come from it (preset, seed and weight_dtype are ignored); else random weights.
  std::string gguf_path;
  std::string chat_template;  // --chat-template: a known family that overrides the file's
};

struct ServedModel {
  // Shared: a test harness runs several servers over one tokenizer, each with its own engine.
  std::shared_ptr<text::Tokenizer> tokenizer;
  std::unique_ptr<engine::Engine> engine;
  std::vector<int32_t> stop_ids;  // <|im_end|>, <|endoftext|> (those the tokenizer has)
  int64_t vocab_size = 0;         // the model's, after padding
  int64_t load_ns = 0;            // time to build it (logged at start)
  cache::WeightsOrigin weights;   // where the weights came from (the disk tier's fingerprint)
};

// Errors: the tokenizer file (NotFound / parse errors), an unknown preset, invalid options, or
// a tokenizer with neither stop token; for a GGUF file, the file's and the loader's errors, a
// chat template that is not recognised, or a tokenizer larger than the model's vocabulary.
core::Result<ServedModel> load_served_model(const ModelSpec& spec);

}  // namespace anchorage::server

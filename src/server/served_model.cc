#include "server/served_model.h"

#include <algorithm>

#include "core/clock.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::server {

core::Result<ServedModel> load_served_model(const ModelSpec& spec) {
  const int64_t t0 = core::now_ns();
  ServedModel out;
  auto tokenizer = text::Tokenizer::load_file(spec.tokenizer_json);
  if (!tokenizer) return tokenizer.error();
  out.tokenizer = std::make_unique<text::Tokenizer>(std::move(tokenizer.value()));
  // The chat format's end of turn and the base model's end of text: both end a generation
  // whatever the request says.
  for (const char* piece : {"<|im_end|>", "<|endoftext|>"}) {
    if (auto id = out.tokenizer->token_id(piece)) out.stop_ids.push_back(*id);
  }
  if (out.stop_ids.empty()) {
    return core::Status::invalid_argument("tokenizer: has neither <|im_end|> nor <|endoftext|>");
  }

  auto cfg = model::qwen35::qwen35_preset(spec.preset);
  if (!cfg) return cfg.error();
  cfg->vocab_size = std::max<int64_t>(cfg->vocab_size, out.tokenizer->vocab_size());
  out.vocab_size = cfg->vocab_size;
  model::qwen35::Qwen35Options mopts;
  mopts.weight_dtype = spec.weight_dtype;
  mopts.kv_dtype = spec.kv_dtype;
  auto arch = model::qwen35::make_random_qwen35(*cfg, spec.seed, mopts);
  if (!arch) return arch.error();

  engine::EngineOptions eopts;
  eopts.capacity = spec.capacity;
  eopts.n_threads = spec.threads;
  auto engine = engine::Engine::create(std::move(arch.value()), eopts);
  if (!engine) return engine.error();
  out.engine = std::move(engine.value());
  out.load_ns = core::now_ns() - t0;
  return out;
}

}  // namespace anchorage::server

#include "server/served_model.h"

#include <algorithm>
#include <future>

#include "core/clock.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/qwen35_gguf_loader.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"
#include "server/gguf_text.h"

namespace anchorage::server {

namespace {

double seconds_since(int64_t t0_ns) {
  return double(core::now_ns() - t0_ns) * 1e-9;
}

// The tokenizer of a GGUF file: the file's own when it has one, else tokenizer.json.
core::Result<text::Tokenizer> read_tokenizer(const model::gguf::GgufFile& file,
                                             const ModelSpec& spec) {
  const int64_t t0 = core::now_ns();
  const bool own = gguf_has_tokenizer(file);
  ANCHORAGE_LOG_INFO("start: loading the tokenizer from %s, beside the weights",
                     own ? "the model file" : spec.tokenizer_json.c_str());
  auto tokenizer = own ? gguf_tokenizer(file) : text::Tokenizer::load_file(spec.tokenizer_json);
  if (tokenizer)
    ANCHORAGE_LOG_INFO("start: tokenizer ready (%d ids) in %.3f s", tokenizer->vocab_size(),
                       seconds_since(t0));
  return tokenizer;
}

// The engine over a model, its context spec.capacity tokens.
core::Result<std::unique_ptr<engine::Engine>> make_engine(
    const ModelSpec& spec, std::unique_ptr<model::Architecture> arch) {
  const int64_t t0 = core::now_ns();
  engine::EngineOptions eopts;
  eopts.capacity = spec.capacity;
  eopts.n_threads = spec.threads;
  eopts.anchor_spacing = spec.anchor_spacing;
  eopts.defer_fault_in = true;  // HttpServer::bind() starts it
  auto engine = engine::Engine::create(std::move(arch), eopts);
  if (!engine) return engine.error();
  ANCHORAGE_LOG_INFO("start: engine ready (context %lld tokens) in %.3f s",
                     (long long)spec.capacity, seconds_since(t0));
  return engine;
}

// The engine over a GGUF file's model, and the file's tokenizer. The tokenizer is read on a
// thread of its own while the weights load and the engine is made (the tokenizer takes the
// longer: docs/performance.md "Start-up").
core::Status load_gguf(const ModelSpec& spec, ServedModel* out, std::vector<int64_t>* eos_ids) {
  const int64_t t_open = core::now_ns();
  auto file = model::gguf::GgufFile::open(spec.gguf_path);
  if (!file) return file.error();
  ANCHORAGE_LOG_INFO("start: %s mapped and parsed in %.3f s (%zu keys, %zu tensors)",
                     spec.gguf_path.c_str(), seconds_since(t_open), file->metadata().size(),
                     file->tensors().size());
  if (core::Status s = check_gguf_chat_template(*file, spec.chat_template); !s.is_ok()) {
    return s.code() == core::StatusCode::kInvalidArgument
               ? s
               : core::Status::unsupported(spec.gguf_path + ": " + s.message());
  }
  // Declared after the file: destroyed (and so waited for) before it.
  auto tokenizer = std::async(std::launch::async, [&] { return read_tokenizer(*file, spec); });
  model::qwen35::Qwen35Options mopts;
  mopts.kv_dtype = spec.kv_dtype;
  // Ready on the file's rows; the panels are made in the background (same answers: the
  // kernels read the same bytes either way; docs/performance.md "Start-up").
  mopts.defer_packing = true;
  core::ThreadPool pool(spec.threads > 0 ? spec.threads : core::ThreadPool::hardware_threads());
  const int64_t t0 = core::now_ns();
  ANCHORAGE_LOG_INFO("start: loading weights from %s", spec.gguf_path.c_str());
  auto m = model::gguf::load_qwen35_gguf(*file, mopts, &pool);
  if (!m) return m.error();
  ANCHORAGE_LOG_INFO("start: weights loaded in %.3f s (left in the file, packed in the background)",
                     seconds_since(t0));
  model::qwen35::Qwen35Model* loaded = m->get();  // owned by the engine from here on
  *eos_ids = loaded->config().eos_token_ids;
  out->vocab_size = loaded->vocab_size();
  // Made while the tokenizer is read.
  auto engine = make_engine(spec, std::move(m.value()));
  if (!engine) return engine.error();
  auto tok = tokenizer.get();
  if (!tok) return tok.error();
  if (tok->vocab_size() > out->vocab_size) {
    return core::Status::invalid_argument(
        spec.gguf_path + ": the tokenizer has " + std::to_string(tok->vocab_size()) +
        " ids, more than the model's vocabulary of " + std::to_string(out->vocab_size));
  }
  // Packed once the tokenizer is done: started beside it, the packing (nice 10, but faulting
  // the file in) held its thread back by 20-30 ms on a cold 433 MB file (docs/performance.md
  // "Start-up").
  loaded->pack_in_background(pool.n_threads(), [file = file->shared_file()](double seconds) {
    ANCHORAGE_LOG_INFO("start: weights packed in the background in %.3f s", seconds);
    file->drop_resident_pages();
  });
  out->tokenizer = std::make_unique<text::Tokenizer>(std::move(tok.value()));
  out->engine = std::move(engine.value());
  return core::Status::ok();
}

// The tokenizer from tokenizer.json for random weights (a GGUF file's came with its weights),
// and the ids that end a generation whatever the request says: the chat format's end of turn, the
// base model's end of text, and the file's eos ids.
core::Status load_tokenizer(const ModelSpec& spec, const std::vector<int64_t>& eos_ids,
                            ServedModel* out) {
  if (out->tokenizer == nullptr) {
    const int64_t t_tok = core::now_ns();
    ANCHORAGE_LOG_INFO("start: loading the tokenizer from %s", spec.tokenizer_json.c_str());
    auto tokenizer = text::Tokenizer::load_file(spec.tokenizer_json);
    if (!tokenizer) return tokenizer.error();
    out->tokenizer = std::make_unique<text::Tokenizer>(std::move(tokenizer.value()));
    ANCHORAGE_LOG_INFO("start: tokenizer ready (%d ids) in %.3f s", out->tokenizer->vocab_size(),
                       seconds_since(t_tok));
  }
  for (const char* piece : {"<|im_end|>", "<|endoftext|>"}) {
    if (auto id = out->tokenizer->token_id(piece)) out->stop_ids.push_back(*id);
  }
  if (out->stop_ids.empty()) {
    return core::Status::invalid_argument("tokenizer: has neither <|im_end|> nor <|endoftext|>");
  }
  for (int64_t id : eos_ids) {
    if (std::find(out->stop_ids.begin(), out->stop_ids.end(), int32_t(id)) == out->stop_ids.end())
      out->stop_ids.push_back(int32_t(id));
  }
  return core::Status::ok();
}

// A preset's random weights, its vocabulary padded to cover the tokenizer.
core::Result<std::unique_ptr<model::Architecture>> random_model(const ModelSpec& spec,
                                                                ServedModel* out) {
  const int64_t t_w = core::now_ns();
  ANCHORAGE_LOG_INFO("start: making random weights (preset %s, seed %llu)", spec.preset.c_str(),
                     (unsigned long long)spec.seed);
  auto cfg = model::qwen35::qwen35_preset(spec.preset);
  if (!cfg) return cfg.error();
  cfg->vocab_size = std::max<int64_t>(cfg->vocab_size, out->tokenizer->vocab_size());
  out->vocab_size = cfg->vocab_size;
  model::qwen35::Qwen35Options mopts;
  mopts.weight_dtype = spec.weight_dtype;
  mopts.kv_dtype = spec.kv_dtype;
  auto random = model::qwen35::make_random_qwen35(*cfg, spec.seed, mopts);
  if (!random) return random.error();
  ANCHORAGE_LOG_INFO("start: weights ready in %.3f s", seconds_since(t_w));
  return std::move(random.value());
}

}  // namespace

core::Result<ServedModel> load_served_model(const ModelSpec& spec) {
  const int64_t t0 = core::now_ns();
  ServedModel out;
  std::vector<int64_t> eos_ids;
  if (!spec.gguf_path.empty()) {
    out.weights.file = spec.gguf_path;
    if (core::Status s = load_gguf(spec, &out, &eos_ids); !s.is_ok()) return s;
    if (core::Status s = load_tokenizer(spec, eos_ids, &out); !s.is_ok()) return s;
  } else {
    out.weights.preset = spec.preset;
    out.weights.seed = spec.seed;
    if (core::Status s = load_tokenizer(spec, eos_ids, &out); !s.is_ok()) return s;
    auto arch = random_model(spec, &out);
    if (!arch) return arch.error();
    auto engine = make_engine(spec, std::move(arch.value()));
    if (!engine) return engine.error();
    out.engine = std::move(engine.value());
  }
  out.load_ns = core::now_ns() - t0;
  return out;
}

}  // namespace anchorage::server

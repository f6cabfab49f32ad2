// Model flags and loading for `run` and `serve`.
#include "cli/model_source.h"

#include "core/thread_pool.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/qwen35_gguf_loader.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"
#include "text/chat_template_family.h"

namespace anchorage::cli {

void add_model_flags(FlagSet* f, ModelArgs* a, bool chat_template) {
  f->add_string("model", &a->model,
                "a GGUF model file (qwen35, qwen35moe, qwen3next); "
                "none: random weights from --preset");
  f->add_string("preset", &a->preset,
                "qwen35 preset with random weights: tiny, tiny-moe, small, qwen3.5-0.8b, ...");
  f->add_uint("seed", &a->seed, "seed of the random weights");
  f->add_string("weight-dtype", &a->weight_dtype,
                "random weights' linear layers: f32, bf16, f16 or a GGUF block type (q8_0, "
                "q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs; a "
                "--model file keeps its own types)");
  f->add_string("kv-dtype", &a->kv_dtype, "attention K/V rows: f32 or bf16");
  if (chat_template) {
    f->add_string("chat-template", &a->chat_template,
                  "force a chat template family (qwen3) instead of the --model file's");
  }
}

std::vector<const char*> model_flag_names() {
  return {"model", "preset", "seed", "weight-dtype", "kv-dtype", "chat-template"};
}

std::string check_model_args(const ModelArgs& a, core::DType* weight, core::DType* kv) {
  if (!core::parse_dtype(a.weight_dtype, weight)) {
    return "--weight-dtype must be f32, bf16, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, "
           "q4_k, q5_k, q6_k, iq4_nl or iq4_xs";
  }
  if (!core::parse_dtype(a.kv_dtype, kv) || (*kv != core::DType::kF32 && *kv != core::DType::kBF16))
    return "--kv-dtype must be f32 or bf16";
  if (!a.chat_template.empty()) {
    auto family = text::chat_template_family_by_name(a.chat_template);
    if (!family) return family.error().message();
  }
  return {};
}

core::Result<LoadedModel> load_model(const ModelArgs& a, int threads) {
  LoadedModel out;
  core::DType weight = core::DType::kF32, kv = core::DType::kF32;
  if (std::string e = check_model_args(a, &weight, &kv); !e.empty()) {
    return core::Status::invalid_argument(e);
  }
  model::qwen35::Qwen35Options opts;
  opts.weight_dtype = weight;
  opts.kv_dtype = kv;
  if (!a.model.empty()) {
    auto file = model::gguf::GgufFile::open(a.model);
    if (!file) return file.error();
    core::ThreadPool pool(threads > 0 ? threads : core::ThreadPool::hardware_threads());
    auto m = model::gguf::load_qwen35_gguf(*file, opts, &pool);
    if (!m) return m.error();
    out.eos_ids = (*m)->config().eos_token_ids;
    out.label = "file=" + a.model + " arch=" + (*m)->config().model_type;
    out.arch = std::move(m.value());
    return out;
  }
  auto cfg = model::qwen35::qwen35_preset(a.preset);
  if (!cfg) return cfg.error();
  auto m = model::qwen35::make_random_qwen35(*cfg, a.seed, opts);
  if (!m) return m.error();
  out.eos_ids = cfg->eos_token_ids;
  out.label = "preset=" + a.preset + " weights=" + a.weight_dtype;
  out.arch = std::move(m.value());
  return out;
}

void fill_model_spec(const ModelArgs& a, server::ModelSpec* spec) {
  spec->preset = a.preset;
  spec->seed = a.seed;
  spec->gguf_path = a.model;
  spec->chat_template = a.chat_template;
}

}  // namespace anchorage::cli

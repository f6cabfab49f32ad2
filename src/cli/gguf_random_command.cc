#include "cli/gguf_random_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/flags.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/gguf/gguf_writer.h"
#include "model/gguf/qwen35_gguf_export.h"
#include "model/qwen35/config.h"
#include "model/qwen35/tensors.h"
#include "text/bpe_vocab.h"
#include "text/qwen3_chat_template.h"
#include "text/tokenizer_spec.h"

namespace anchorage::cli {

namespace {

using model::gguf::GgufType;
using model::gguf::GgufValue;

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "anchorage gguf-random: %s (see anchorage gguf-random --help)\n",
               msg.c_str());
  return 2;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "anchorage gguf-random: %s\n", msg.c_str());
  return 1;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// tokenizer.ggml.* and tokenizer.chat_template from a tokenizer directory; widens *vocab to
// cover it. The template is tokenizer_config.json's when present, else the Qwen3 one.
core::Status add_tokenizer(const std::string& dir, const text::TokenizerSpec& spec, int64_t vocab,
                           model::gguf::GgufWriter* w) {
  const text::BpeVocab v = text::vocab_from_spec(spec, "qwen2", vocab);
  auto id_of = [&](const std::string& content) -> int64_t {
    for (const auto& a : spec.added_tokens)
      if (a.content == content) return a.id;
    return -1;
  };
  w->add("tokenizer.ggml.model", GgufValue::string("gpt2"));
  w->add("tokenizer.ggml.pre", GgufValue::string(v.pre));
  w->add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  w->add("tokenizer.ggml.token_type",
         GgufValue::int_array(GgufType::kI32,
                              std::vector<int64_t>(v.token_types.begin(), v.token_types.end())));
  w->add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  const int64_t im_end = id_of("<|im_end|>"), eot = id_of("<|endoftext|>");
  if (im_end >= 0) w->add("tokenizer.ggml.eos_token_id", GgufValue::u32(uint32_t(im_end)));
  if (eot >= 0) {
    w->add("tokenizer.ggml.padding_token_id", GgufValue::u32(uint32_t(eot)));
    w->add("tokenizer.ggml.bos_token_id", GgufValue::u32(uint32_t(eot)));
  }
  w->add("tokenizer.ggml.add_bos_token", GgufValue::boolean(false));
  std::string config_text, chat_template(text::qwen3_chat_template_source());
  if (read_file(dir + "/tokenizer_config.json", &config_text)) {
    const auto j = nlohmann::json::parse(config_text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("chat_template") && j["chat_template"].is_string()) {
      chat_template = j["chat_template"].get<std::string>();
    }
  }
  w->add("tokenizer.chat_template", GgufValue::string(chat_template));
  return core::Status::ok();
}

}  // namespace

int gguf_random_command(const std::vector<std::string_view>& args) {
  std::string preset = "tiny", type = "f32", out, arch, tokenizer_dir;
  uint64_t seed = 1;
  bool legacy = false, fuse_qkv = false;
  FlagSet flags;
  flags.add_string("preset", &preset, "qwen35 preset: tiny, tiny-moe, small, qwen3.5-0.8b, ...");
  flags.add_uint("seed", &seed, "seed of the random weights (as run --seed)");
  std::string mix;
  flags.add_string("type", &type,
                   "linear layers: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, "
                   "q4_k, q5_k, q6_k, iq4_nl, iq4_xs");
  flags.add_string("mix", &mix,
                   "comma-separated types given to the linear tensors in turn (a per-tensor "
                   "mix like llama.cpp's _M files); overrides --type for them");
  flags.add_string("arch", &arch, "qwen35, qwen35moe or qwen3next (none: by the preset)");
  flags.add_string("out", &out, "the file to write");
  flags.add_string("tokenizer-dir", &tokenizer_dir,
                   "a directory with tokenizer.json (and tokenizer_config.json) to embed");
  flags.add_bool("legacy-ssm-in", &legacy, "qwen3next: write the old fused ssm_in tensor");
  flags.add_bool("fuse-qkv", &fuse_qkv, "one attn_qkv tensor per attention layer");
  bool help = false;
  if (core::Status s = flags.parse(args, &help); !s.is_ok()) return usage_error(s.message());
  if (help) {
    std::printf(
        "usage: anchorage gguf-random --preset P --type T --out FILE [flags]\n"
        "Writes a random-weight model of a preset as a GGUF file.\n\nflags:\n");
    flags.print_help(stdout);
    return 0;
  }
  if (out.empty()) return usage_error("--out is required");
  core::DType dtype = core::DType::kF32;
  if (!core::parse_dtype(type, &dtype)) return usage_error("--type: unknown type '" + type + "'");
  std::vector<core::DType> mixed;
  for (size_t pos = 0; !mix.empty() && pos <= mix.size();) {
    const size_t comma = std::min(mix.find(',', pos), mix.size());
    const std::string name = mix.substr(pos, comma - pos);
    core::DType t;
    if (!core::parse_dtype(name, &t)) return usage_error("--mix: unknown type '" + name + "'");
    mixed.push_back(t);
    pos = comma + 1;
  }
  auto cfg = model::qwen35::qwen35_preset(preset);
  if (!cfg) return usage_error(cfg.error().message());

  model::gguf::GgufWriter w;
  text::TokenizerSpec spec;
  if (!tokenizer_dir.empty()) {
    std::string json;
    if (!read_file(tokenizer_dir + "/tokenizer.json", &json))
      return fail(tokenizer_dir + "/tokenizer.json: cannot read");
    auto parsed = text::parse_tokenizer_json(json);
    if (!parsed) return fail(parsed.error().to_string());
    spec = std::move(parsed.value());
    int64_t ids = int64_t(spec.token_bytes.size());
    for (const auto& a : spec.added_tokens) ids = std::max<int64_t>(ids, a.id + 1);
    cfg->vocab_size = std::max(cfg->vocab_size, ids);  // the embedding covers every token
  }
  model::gguf::GgufExportOptions o;
  o.arch = !arch.empty() ? arch : cfg->num_experts > 0 ? "qwen35moe" : "qwen35";
  o.weight_type = dtype;
  o.mixed_types = mixed;
  o.legacy_ssm_in = legacy;
  o.fused_attn_qkv = fuse_qkv;
  o.name = "anchorage-random-" + preset;
  core::ThreadPool pool(core::ThreadPool::hardware_threads());
  const model::qwen35::Qwen35Tensors t = model::qwen35::random_tensors(*cfg, seed, &pool);
  if (core::Status s = model::gguf::export_qwen35_gguf(t, o, &w, nullptr); !s.is_ok())
    return usage_error(s.message());
  if (!tokenizer_dir.empty()) {
    if (core::Status s = add_tokenizer(tokenizer_dir, spec, cfg->vocab_size, &w); !s.is_ok())
      return fail(s.to_string());
  } else if (!cfg->eos_token_ids.empty()) {
    w.add("tokenizer.ggml.eos_token_id", GgufValue::u32(uint32_t(cfg->eos_token_ids[0])));
  }
  if (core::Status s = w.write_file(out); !s.is_ok()) return fail(s.to_string());
  std::printf("wrote %s: arch %s, preset %s, type %s, seed %llu\n", out.c_str(), o.arch.c_str(),
              preset.c_str(), mix.empty() ? type.c_str() : mix.c_str(), (unsigned long long)seed);
  return 0;
}

}  // namespace anchorage::cli

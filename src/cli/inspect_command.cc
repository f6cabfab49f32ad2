#include "cli/inspect_command.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/flags.h"
#include "cli/model_source.h"
#include "core/dtype.h"
#include "engine/engine.h"
#include "model/gguf/ggml_type.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/qwen35_gguf_loader.h"

namespace anchorage::cli {

namespace {

using model::gguf::GgufType;
using model::gguf::GgufValue;

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "anchorage inspect: %s (see anchorage inspect --help)\n", msg.c_str());
  return 2;
}

// A printable form of a string: escapes, and only its length when long.
std::string show_string(std::string_view s) {
  if (s.size() > 64) return "<string of " + std::to_string(s.size()) + " bytes>";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string show_scalar(const GgufValue& v) {
  if (v.type == GgufType::kBool) return v.bits ? "true" : "false";
  if (v.is_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", *v.as_double());
    return buf;
  }
  if (auto i = v.as_int()) return std::to_string(*i);
  return std::to_string(v.bits);  // a u64 above INT64_MAX
}

std::string show_value(const GgufValue& v) {
  if (v.type == GgufType::kString) return show_string(v.str);
  if (v.type != GgufType::kArray) return show_scalar(v);
  std::string out =
      std::string(model::gguf::gguf_type_name(v.elem)) + "[" + std::to_string(v.count) + "]";
  if (v.count > 8 || v.elem == GgufType::kArray) return out;
  out += " {";
  for (uint64_t i = 0; i < v.count; ++i) {
    out += i ? ", " : "";
    out +=
        v.elem == GgufType::kString ? show_string(v.strings[size_t(i)]) : show_scalar(v.element(i));
  }
  return out + "}";
}

// A scalar as JSON: 64-bit integers as decimal strings (exact in any reader), f32 as the
// double it widens to.
nlohmann::ordered_json scalar_json(const GgufValue& v) {
  if (v.type == GgufType::kBool) return v.bits != 0;
  if (v.is_float()) return *v.as_double();
  if (v.type == GgufType::kU64) return std::to_string(v.bits);
  if (v.type == GgufType::kI64) return std::to_string(*v.as_int());
  return *v.as_int();
}

nlohmann::ordered_json value_json(const GgufValue& v) {
  if (v.type == GgufType::kString) return v.str;
  if (v.type != GgufType::kArray) return scalar_json(v);
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (uint64_t i = 0; i < v.count; ++i) {
    if (v.elem == GgufType::kString) {
      a.push_back(std::string(v.strings[size_t(i)]));
    } else if (v.elem == GgufType::kArray) {
      a.push_back(value_json(v.arrays[size_t(i)]));
    } else {
      a.push_back(scalar_json(v.element(i)));
    }
  }
  return a;
}

// The whole parse as JSON (for other readers to compare with; strings are the file's bytes,
// invalid UTF-8 replaced).
void print_json(const model::gguf::GgufFile& f) {
  nlohmann::ordered_json j;
  j["version"] = f.version();
  j["alignment"] = f.alignment();
  j["data_offset"] = f.data_offset();
  nlohmann::ordered_json md = nlohmann::ordered_json::array();
  for (const auto& [k, v] : f.metadata()) {
    nlohmann::ordered_json e;
    e["key"] = k;
    e["type"] = uint32_t(v.type);
    if (v.type == GgufType::kArray) e["elem"] = uint32_t(v.elem);
    e["value"] = value_json(v);
    md.push_back(std::move(e));
  }
  j["metadata"] = std::move(md);
  nlohmann::ordered_json ts = nlohmann::ordered_json::array();
  for (const auto& t : f.tensors()) {
    ts.push_back({{"name", t.name},
                  {"shape", t.ne},
                  {"type", t.ggml_type},
                  {"offset", t.offset},
                  {"bytes", t.n_bytes}});
  }
  j["tensors"] = std::move(ts);
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

int inspect_command(const std::vector<std::string_view>& args) {
  std::string kv_dtype = ModelArgs{}.kv_dtype;  // serve's default
  bool no_load = false, json = false;
  FlagSet flags;
  flags.add_bool("json", &json, "print the parsed metadata and tensor infos as JSON, only");
  flags.add_string("kv-dtype", &kv_dtype, "K/V element type the KV bytes per token assume");
  flags.add_bool("no-load", &no_load, "only parse the file (no model load, no cost figures)");
  std::vector<std::string_view> flag_args;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--kv-dtype" && i + 1 < args.size()) {  // a flag with a separate value
      flag_args.push_back(args[i]);
      flag_args.push_back(args[++i]);
    } else if (args[i].empty() || args[i][0] == '-' || !path.empty()) {
      flag_args.push_back(args[i]);
    } else {
      path = std::string(args[i]);
    }
  }
  bool help = false;
  if (core::Status s = flags.parse(flag_args, &help); !s.is_ok()) return usage_error(s.message());
  if (help) {
    std::printf(
        "usage: anchorage inspect FILE.gguf [flags]\n"
        "Prints a GGUF model file's metadata, hyper-parameters and tensors, and the\n"
        "state and KV bytes serving it costs.\n\nflags:\n");
    flags.print_help(stdout);
    return 0;
  }
  if (path.empty()) return usage_error("no file given");
  core::DType kv = core::DType::kF32;
  if (!core::parse_dtype(kv_dtype, &kv) || (kv != core::DType::kF32 && kv != core::DType::kBF16))
    return usage_error("--kv-dtype must be f32 or bf16");

  auto file = model::gguf::GgufFile::open(path);
  if (!file) {
    std::fprintf(stderr, "anchorage inspect: %s\n", file.error().to_string().c_str());
    return 1;
  }
  const auto& f = *file;
  if (json) {
    print_json(f);
    return 0;
  }
  std::printf(
      "file: %s\nformat: GGUF v%u, alignment %u, %zu metadata keys, %zu tensors, "
      "data at byte %llu\n",
      path.c_str(), f.version(), f.alignment(), f.metadata().size(), f.tensors().size(),
      (unsigned long long)f.data_offset());
  std::printf("\nmetadata:\n");
  for (const auto& [k, v] : f.metadata()) {
    std::printf("  %-48s %-6s %s\n", k.c_str(),
                std::string(model::gguf::gguf_type_name(v.type)).c_str(), show_value(v).c_str());
  }
  std::printf("\ntensors:\n");
  int64_t total = 0;
  for (const auto& t : f.tensors()) {
    const auto info = model::gguf::ggml_type_info(t.ggml_type);
    std::printf("  %-40s %-22s %-8s %12lld bytes\n", t.name.c_str(), t.shape_string().c_str(),
                info ? info->name : "?", (long long)t.n_bytes);
    total += t.n_bytes;
  }
  std::printf("tensor bytes: %lld\n", (long long)total);

  auto cfg = model::gguf::qwen35_config_from_gguf(f);
  if (!cfg) {
    std::fprintf(stderr, "anchorage inspect: %s\n", cfg.error().to_string().c_str());
    return 1;
  }
  const auto& c = *cfg;
  std::printf("\narchitecture: %s\n", c.model_type.c_str());
  std::printf(
      "hyper-parameters: layers %lld (%lld GDN, %lld attention; %lld MTP not run), "
      "hidden %lld, vocab %lld, tied head %s\n",
      (long long)c.num_hidden_layers, (long long)c.n_linear_layers(), (long long)c.n_full_layers(),
      (long long)c.mtp_num_hidden_layers, (long long)c.hidden_size, (long long)c.vocab_size,
      c.tie_word_embeddings ? "yes" : "no");
  std::printf("  gdn: key heads %lld, value heads %lld (%s order), d_k %lld, d_v %lld, conv %lld\n",
              (long long)c.linear_num_key_heads, (long long)c.linear_num_value_heads,
              c.value_heads_tiled ? "tiled" : "grouped", (long long)c.linear_key_head_dim,
              (long long)c.linear_value_head_dim, (long long)c.linear_conv_kernel_dim);
  std::printf(
      "  attention: q heads %lld, kv heads %lld, head dim %lld, rotary dim %lld, "
      "rope theta %.9g, rms eps %.9g\n",
      (long long)c.num_attention_heads, (long long)c.num_key_value_heads, (long long)c.head_dim,
      (long long)c.rotary_dim(), c.rope_theta, c.rms_norm_eps);
  if (c.num_experts > 0) {
    std::printf("  ffn: MoE, %lld experts, top %lld, expert width %lld, shared width %lld\n",
                (long long)c.num_experts, (long long)c.num_experts_per_tok,
                (long long)c.moe_intermediate_size, (long long)c.shared_expert_intermediate_size);
  } else {
    std::printf("  ffn: dense, width %lld\n", (long long)c.intermediate_size);
  }
  std::printf("  parameters: %lld\n", (long long)c.n_parameters());
  if (no_load) return 0;

  model::qwen35::Qwen35Options opts;
  opts.kv_dtype = kv;
  core::ThreadPool pool(core::ThreadPool::hardware_threads());
  auto m = model::gguf::load_qwen35_gguf(f, opts, &pool);
  if (!m) {
    std::fprintf(stderr, "anchorage inspect: %s\n", m.error().to_string().c_str());
    return 1;
  }
  const int64_t weight_bytes = (*m)->weight_bytes();
  engine::EngineOptions eo;
  eo.capacity = 1;
  eo.n_threads = 1;
  auto eng = engine::Engine::create(std::move(m.value()), eo);
  if (!eng) {
    std::fprintf(stderr, "anchorage inspect: %s\n", eng.error().to_string().c_str());
    return 1;
  }
  const engine::StateCost cost = (*eng)->cost();
  std::printf("\nloaded: weight bytes read per decode step %lld\n", (long long)weight_bytes);
  std::printf("cost: state bytes per sequence %lld, KV bytes per token %lld (kv %s)\n",
              (long long)cost.section_bytes, (long long)cost.bytes_per_token, kv_dtype.c_str());
  return 0;
}

}  // namespace anchorage::cli

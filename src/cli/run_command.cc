#include "cli/run_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/flags.h"
#include "cli/model_source.h"
#include "cli/progress_bar.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "model/op_profile.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::cli {

namespace {

struct RunArgs {
  ModelArgs model;
  int64_t prompt_tokens = 128;
  std::string prompt_ids;
  int64_t max_tokens = 32;
  int64_t threads = 0;
  int64_t chunk = 1024;
  int64_t anchor_spacing = 1024;
  int64_t capacity = 0;
  double temperature = 0.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  double min_p = 0.0;
  uint64_t sampling_seed = 0;
  bool ignore_eos = false;
  bool profile = false;
  bool progress = false;
};

FlagSet make_flags(RunArgs* a) {
  FlagSet f;
  add_model_flags(&f, &a->model, /*chat_template=*/false);
  f.add_int("prompt-tokens", &a->prompt_tokens, "length of the random prompt");
  f.add_string("prompt-ids", &a->prompt_ids, "explicit prompt token ids, e.g. 1,2,3");
  f.add_int("max-tokens", &a->max_tokens, "tokens to generate");
  f.add_int("threads", &a->threads, "threads, counting the engine thread (0 = all)");
  f.add_int("chunk", &a->chunk, "prefill chunk in tokens");
  f.add_int("anchor-spacing", &a->anchor_spacing, "anchor grid in tokens");
  f.add_int("capacity", &a->capacity, "context capacity (0 = prompt + max-tokens)");
  f.add_double("temperature", &a->temperature, "sampling temperature (0 = greedy)");
  f.add_int("top-k", &a->top_k, "top-k filter (0 = off)");
  f.add_double("top-p", &a->top_p, "top-p filter (1 = off)");
  f.add_double("min-p", &a->min_p, "min-p filter (0 = off)");
  f.add_uint("sampling-seed", &a->sampling_seed, "seed of the sampler");
  f.add_bool("ignore-eos", &a->ignore_eos, "do not stop at the preset's end-of-sequence ids");
  f.add_bool("profile", &a->profile, "print a per-op time breakdown");
  f.add_bool("progress", &a->progress, "draw the prefill progress bar even if stderr is no TTY");
  return f;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "anchorage run: %s (see anchorage run --help)\n", msg.c_str());
  return 2;
}

void print_profile(const char* phase, const model::OpProfile& p) {
  const double total = double(p.total_ns());
  for (size_t k = 0; k < p.ns.size(); ++k) {
    if (p.ns[k] == 0) continue;
    std::printf("profile: %s %-10s %10.3f ms %5.1f%%\n", phase,
                std::string(model::op_kind_name(model::OpKind(k))).c_str(), double(p.ns[k]) * 1e-6,
                total > 0 ? 100.0 * double(p.ns[k]) / total : 0.0);
  }
}

const char* finish_name(engine::FinishReason r) {
  switch (r) {
    case engine::FinishReason::kMaxTokens:
      return "max_tokens";
    case engine::FinishReason::kStopToken:
      return "stop_token";
    case engine::FinishReason::kCapacity:
      return "capacity";
    case engine::FinishReason::kStopped:
      return "stopped";
  }
  return "?";
}

void print_help(const FlagSet& flags) {
  std::printf(
      "usage: anchorage run [flags]\n"
      "Runs one generation on a qwen35 model (a GGUF file, or random weights from a preset)\n"
      "and prints the generated token ids and a timing summary. --seed also seeds the random\n"
      "prompt.\n\nflags:\n");
  flags.print_help(stdout);
}

// Checks every flag before the (slow) model build; returns the usage error or "".
std::string check_args(const RunArgs& a, model::qwen35::Qwen35Options* mo,
                       std::vector<int32_t>* prompt_ids, engine::SamplingParams* sampling) {
  if (std::string e = check_model_args(a.model, &mo->weight_dtype, &mo->kv_dtype); !e.empty())
    return e;
  if (!a.prompt_ids.empty() && !parse_int_list(a.prompt_ids, prompt_ids))
    return "--prompt-ids must be a comma-separated list of token ids";
  if (prompt_ids->empty() && a.prompt_tokens < 1) return "--prompt-tokens must be >= 1";
  if (a.max_tokens < 0) return "--max-tokens must be >= 0";
  if (a.threads < 0 || a.threads > 1024) return "--threads must be in [0, 1024]";
  if (a.chunk < 1) return "--chunk must be >= 1";
  if (a.anchor_spacing < 1) return "--anchor-spacing must be >= 1";
  if (a.capacity < 0) return "--capacity must be >= 0";
  *sampling = {a.temperature, a.top_k, a.top_p, a.min_p, a.sampling_seed};
  if (core::Status s = sampling->validate(); !s.is_ok()) return s.message();
  return {};
}

struct Summary {
  std::string model_name;
  std::string label;
  int64_t weight_bytes = 0;
  int n_threads = 0;
  double load_s = 0.0;
  size_t prompt_tokens = 0;
};

void print_summary(const RunArgs& a, const Summary& m, const engine::GenerationResult& r) {
  std::printf("model: %s %s kv=%s weight_bytes=%lld threads=%d load_s=%.3f\n", m.model_name.c_str(),
              m.label.c_str(), a.model.kv_dtype.c_str(), (long long)m.weight_bytes, m.n_threads,
              m.load_s);
  std::printf("prompt: %zu tokens\n", m.prompt_tokens);
  std::printf("tokens:");
  for (int32_t t : r.tokens) std::printf(" %d", t);
  std::printf("\nfinish: %s\n", finish_name(r.finish));
  const double prefill_s = double(r.prefill_ns) * 1e-9;
  const double decode_s = double(r.decode_ns) * 1e-9;
  std::printf("prefill: %zu tokens in %.3f s = %.1f tok/s\n", m.prompt_tokens, prefill_s,
              prefill_s > 0 ? double(m.prompt_tokens) / prefill_s : 0.0);
  std::printf("decode: %lld steps in %.3f s = %.1f tok/s\n", (long long)r.decode_steps, decode_s,
              decode_s > 0 ? double(r.decode_steps) / decode_s : 0.0);
}

}  // namespace

int run_command(const std::vector<std::string_view>& args) {
  RunArgs a;
  FlagSet flags = make_flags(&a);
  bool help = false;
  if (core::Status s = flags.parse(args, &help); !s.is_ok()) return usage_error(s.message());
  if (help) {
    print_help(flags);
    return 0;
  }
  model::qwen35::Qwen35Options mo;
  std::vector<int32_t> prompt;
  engine::GenerationOptions go;
  if (std::string err = check_args(a, &mo, &prompt, &go.sampling); !err.empty())
    return usage_error(err);
  go.max_tokens = a.max_tokens;
  if (a.model.model.empty()) {
    if (auto cfg = model::qwen35::qwen35_preset(a.model.preset); !cfg.has_value())
      return usage_error(cfg.error().message());
  }

  Summary sum;
  const int64_t t_load = core::now_ns();
  auto loaded = load_model(a.model, int(a.threads));
  if (!loaded.has_value()) {
    std::fprintf(stderr, "anchorage run: %s\n", loaded.error().to_string().c_str());
    return 1;
  }
  std::unique_ptr<model::Architecture> arch = std::move(loaded->arch);
  sum.load_s = double(core::now_ns() - t_load) * 1e-9;
  sum.model_name = std::string(arch->name());
  sum.label = loaded->label;
  sum.weight_bytes = arch->weight_bytes();
  const int64_t vocab = arch->vocab_size();
  if (prompt.empty()) {
    core::Rng rng(a.model.seed ^ 0x9e3779b97f4a7c15ull);  // not the weights' stream
    for (int64_t i = 0; i < a.prompt_tokens; ++i)
      prompt.push_back(int32_t(rng.next_u64() % uint64_t(vocab)));
  }
  for (int32_t t : prompt)
    if (t < 0 || t >= vocab)
      return usage_error("prompt token id " + std::to_string(t) + " is outside [0, " +
                         std::to_string(vocab) + ")");
  sum.prompt_tokens = prompt.size();
  if (!a.ignore_eos)
    for (int64_t id : loaded->eos_ids) go.stop_ids.push_back(int32_t(id));

  engine::EngineOptions eo;
  eo.capacity =
      a.capacity > 0 ? a.capacity : int64_t(prompt.size()) + std::max<int64_t>(a.max_tokens, 1);
  eo.prefill_chunk = a.chunk;
  eo.anchor_spacing = a.anchor_spacing;
  eo.n_threads = int(a.threads);
  auto eng = engine::Engine::create(std::move(arch), eo);
  if (!eng.has_value()) return usage_error(eng.error().message());
  sum.n_threads = (*eng)->n_threads();

  ProgressBar bar((a.progress || ProgressBar::stderr_is_tty()) && int64_t(prompt.size()) > a.chunk);
  go.prefill.on_progress = [&](int64_t done, int64_t total) { bar.update(done, total); };
  model::OpProfile prefill_profile, decode_profile;
  if (a.profile) {
    go.prefill_profile = &prefill_profile;
    go.decode_profile = &decode_profile;
  }
  auto r = engine::generate(**eng, prompt, go);
  if (!r.has_value()) return usage_error(r.error().message());
  print_summary(a, sum, *r);
  if (a.profile) {
    print_profile("prefill", prefill_profile);
    print_profile("decode", decode_profile);
  }
  return 0;
}

}  // namespace anchorage::cli

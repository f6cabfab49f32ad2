// ModelSource: the flags that choose the model a command runs, shared by `run` and `serve` —
// a GGUF file (--model FILE.gguf, with --chat-template to force a template family) or a
// preset with random weights (--preset, --seed, --weight-dtype) — plus --kv-dtype, and
// loading what they name. Exit-code conventions stay with the commands.
// Threading: start-up only, single-threaded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "core/dtype.h"
#include "core/status.h"
#include "model/architecture.h"
#include "server/served_model.h"

namespace anchorage::cli {

struct ModelArgs {
  std::string model;  // a GGUF file; "" = random weights from the preset
  std::string preset = "small";
  uint64_t seed = 1;
  std::string weight_dtype = "f32";
  std::string kv_dtype = std::string(core::dtype_name(server::ModelSpec{}.kv_dtype));
  std::string chat_template;  // "" = the file's (recognised) template
};

// Registers --model, --preset, --seed, --weight-dtype, --kv-dtype and, when asked,
// --chat-template (serve only: run renders no prompts).
void add_model_flags(FlagSet* flags, ModelArgs* a, bool chat_template);
// The flag names add_model_flags registers (for serve's environment variables).
std::vector<const char*> model_flag_names();

// Checks the flags before any slow load; returns the usage error or "".
std::string check_model_args(const ModelArgs& a, core::DType* weight_dtype, core::DType* kv_dtype);

// What `run` needs of a model.
struct LoadedModel {
  std::unique_ptr<model::Architecture> arch;
  std::vector<int64_t> eos_ids;
  std::string label;  // "preset=small weights=f32" or "file=x.gguf arch=qwen35"
};

// The model the (checked) args name; threads (0 = all) parallelize the load.
core::Result<LoadedModel> load_model(const ModelArgs& a, int threads);

// The model part of serve's spec.
void fill_model_spec(const ModelArgs& a, server::ModelSpec* spec);

}  // namespace anchorage::cli

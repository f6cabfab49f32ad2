// Loading a qwen35-family GGUF file (archs qwen35, qwen35moe, qwen3next; docs/gguf.md,
// docs/model.md §6): the hyper-parameters from the metadata, then every tensor checked
// by name and shape and placed into Qwen35Weights in our conventions. Linear layers keep the
// file's storage type (quantized ones stay quantized); norms and vectors become f32; the
// conv weight is transposed to tap-major; qwen3next's fused projections are split. With
// opts.defer_packing, linear layers whose rows lie in the file as one run are read there (the
// model keeps the file mapped) until Qwen35Model::pack_in_background() packs them.
// Functions of an immutable GgufFile; pool (may be null) parallelizes the placing.
#pragma once

#include <memory>

#include "core/status.h"
#include "core/thread_pool.h"
#include "model/gguf/gguf_file.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::model::gguf {

// The config a file describes (validated). Unsupported for another architecture, NotFound /
// Corruption naming a missing or malformed key.
core::Result<qwen35::Qwen35Config> qwen35_config_from_gguf(const GgufFile& f);

// The model of a file. opts.kv_dtype and opts.defer_packing are used; opts.weight_dtype is ignored
// (weights keep the file's types). Errors: the config's, a missing tensor (NotFound, named), a
// tensor of the wrong shape (Corruption, named, with both shapes), an unsupported type
// (Unsupported, named), an unexpected tensor, or ssm_a >= 0 (a foreign producer).
core::Result<std::unique_ptr<qwen35::Qwen35Model>> load_qwen35_gguf(
    const GgufFile& f, const qwen35::Qwen35Options& opts, core::ThreadPool* pool);

}  // namespace anchorage::model::gguf

// The architectures every invariant test runs over (tests/engine/): the toy (exact on its
// 16-token grid only), the qwen35 `tiny` preset with f32 and bf16 weights / KV and Q8_0
// weights, and `tiny-moe` (MoE FFN) in f32 (exact at every token). A test is parameterised by
// ModelVariant and builds a fresh model per engine from the same seed, so two engines never
// share weights by accident.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "engine/engine.h"
#include "model/architecture.h"

namespace anchorage::test {

struct ModelVariant {
  std::string name;  // a gtest-safe identifier
  std::function<std::unique_ptr<model::Architecture>()> make;
  int64_t n_tokens = 0;  // the sequence length the invariant tests use
};

std::vector<ModelVariant> invariant_variants();

// The qwen35 `tiny` preset with random weights (a fixed seed).
std::unique_ptr<model::Architecture> make_tiny_qwen35(core::DType weights, core::DType kv);
// Any qwen35 preset (e.g. "tiny-moe") with random weights (the same fixed seed).
std::unique_ptr<model::Architecture> make_qwen35_preset(const std::string& preset,
                                                        core::DType weights, core::DType kv);

// An engine over a fresh model of the variant (fails the test on error).
std::unique_ptr<engine::Engine> make_engine(const ModelVariant& v, const engine::EngineOptions& o);

inline std::ostream& operator<<(std::ostream& os, const ModelVariant& v) {
  return os << v.name;
}
inline std::string variant_name(const ::testing::TestParamInfo<ModelVariant>& info) {
  return info.param.name;
}

}  // namespace anchorage::test

#include "support/test_models.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"
#include "support/toy_architecture.h"

namespace anchorage::test {

std::vector<ModelVariant> invariant_variants() {
  std::vector<ModelVariant> v;
  v.push_back({"toy", [] { return make_toy_architecture(7); }, 1200});
  v.push_back({"qwen35_tiny_f32",
               [] { return make_tiny_qwen35(core::DType::kF32, core::DType::kF32); }, 1300});
  v.push_back({"qwen35_tiny_bf16",
               [] { return make_tiny_qwen35(core::DType::kBF16, core::DType::kBF16); }, 1300});
  v.push_back({"qwen35_tiny_q8_0",
               [] { return make_tiny_qwen35(core::DType::kQ8_0, core::DType::kF32); }, 1300});
  v.push_back({"qwen35_tiny_moe",
               [] { return make_qwen35_preset("tiny-moe", core::DType::kF32, core::DType::kF32); },
               1300});
  return v;
}

std::unique_ptr<model::Architecture> make_tiny_qwen35(core::DType weights, core::DType kv) {
  return make_qwen35_preset("tiny", weights, kv);
}

std::unique_ptr<model::Architecture> make_qwen35_preset(const std::string& preset,
                                                        core::DType weights, core::DType kv) {
  auto cfg = model::qwen35::qwen35_preset(preset);
  ANCHORAGE_CHECK(cfg.has_value());
  auto m = model::qwen35::make_random_qwen35(*cfg, 1234, {weights, kv});
  ANCHORAGE_CHECK_MSG(m.has_value(), m.error().to_string().c_str());
  return std::move(m.value());
}

std::unique_ptr<engine::Engine> make_engine(const ModelVariant& v, const engine::EngineOptions& o) {
  auto e = engine::Engine::create(v.make(), o);
  ANCHORAGE_CHECK_MSG(e.has_value(), e.error().to_string().c_str());
  return std::move(e.value());
}

}  // namespace anchorage::test

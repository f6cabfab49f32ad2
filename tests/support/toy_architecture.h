// ToyArchitecture: a made-up model behind model::Architecture, for tests only. It proves the
// engine and the caches depend on nothing but the state contract (docs/architecture.md §3): its
// state has two sections and three views whose shapes, dtypes and token axes differ from
// qwen35's:
//   sections  toy.rec   f32  [2, 16]             two recurrent vectors (state after each token)
//             toy.tail  bf16 [16, 3]             the last three inputs, channel-major (a conv tail)
//   views     toy.key   f32  [T:cap, 2, 16]      token axis first
//             toy.val   f32  [3, 2, T:cap, 4]    token axis in the middle of four axes
//             toy.tag   bf16 [4, T:cap]          token axis last
// Its forward really uses them: the tail feeds a causal conv, the recurrent vectors are
// updated per token, and every row attends over the key/val/tag rows of all earlier positions.
//
// exact_granularity() is 16, and honestly so: each forward call adds a block mean of its own
// tokens in 16-token groups counted from the call's first token, so a call that starts off
// the 16-grid computes different bits than a cold prefill (tests check both ways).
//
// Threading: as model::Architecture (forward on one thread at a time; uses the pool).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/architecture.h"

namespace anchorage::test {

class ToyArchitecture final : public model::Architecture {
 public:
  static constexpr int64_t kDim = 16;
  static constexpr int64_t kVocab = 61;
  static constexpr int64_t kGroup = 16;  // the block of the call-relative reduction
  static constexpr int64_t kValWidth = 3 * 2 * 4;

  explicit ToyArchitecture(uint64_t seed);

  std::string_view name() const override { return "toy"; }
  int64_t vocab_size() const override { return kVocab; }
  core::StateLayout state_layout(int64_t capacity) const override;
  int64_t workspace_bytes(int64_t max_tokens) const override;
  int64_t exact_granularity() const override { return kGroup; }
  int64_t weight_bytes() const override;
  // {architecture: toy, toy_version, seed}: its weights come from the seed, its arithmetic is
  // its own scalar code (no kernels, so no ISA) whose version is kToyVersion.
  nlohmann::json manifest() const override;
  static constexpr int kToyVersion = 1;
  void forward(const model::ForwardRequest& req, const model::StateBuffers& state, void* workspace,
               core::ThreadPool* pool) const override;

 private:
  void run_token(int32_t token, int64_t t, int64_t pos, const model::StateBuffers& state,
                 float* group_sum, float* row_out) const;
  void read_row(int64_t pos, const float* row, const model::StateBuffers& state,
                float* logits) const;

  uint64_t seed_;
  std::vector<float> embed_;  // [kVocab][kDim]
  std::vector<float> conv_;   // [4][kDim]: tap 3 multiplies the current token
  std::vector<float> proj_;   // [kDim][kValWidth]
  std::vector<float> head_;   // [kVocab][kDim]
};

std::unique_ptr<model::Architecture> make_toy_architecture(uint64_t seed);

}  // namespace anchorage::test

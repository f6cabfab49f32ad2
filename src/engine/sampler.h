// Sampler: picks the next token from a row of logits — greedy, or seeded sampling with
// temperature, top-k, top-p and min-p (docs/engine.md "Sampling").
//
// Greedy (temperature <= 0): the argmax; ties go to the lowest token id. The filters do not
// apply (none of them can remove the argmax).
// Sampling applies, in this order (llama.cpp's default chain):
//   1. top-k  (k > 0): keep the k largest logits (ties broken by lower id);
//   2. top-p  (p < 1): softmax of the remaining logits at temperature 1; keep the smallest
//                      prefix, largest first, whose probability mass reaches p;
//   3. min-p  (m > 0): keep tokens whose probability is >= m times the largest one;
//   4. temperature:    divide the kept logits by it, softmax, draw one token with core::Rng.
// At least one token always survives. The weights of a whole vocabulary come from the vector
// exp (the same bits in every ISA) and every sum is in double in a fixed order, so the same seed
// and the same logits give the same token on every run, thread count and ISA. The filters run
// on candidates above a logit threshold that holds whatever they keep (docs/engine.md
// "Sampling": a sort of the whole vocabulary took ~17 ms a token).
//
// Threading: one Sampler per sequence, used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "engine/vocab_exp.h"

namespace anchorage::engine {

struct SamplingParams {
  double temperature = 0.0;  // <= 0: greedy
  int64_t top_k = 0;         // 0: off
  double top_p = 1.0;        // 1: off
  double min_p = 0.0;        // 0: off
  uint64_t seed = 0;         // of the sampling generator

  // InvalidArgument naming the field: temperature < 0 or not finite, top_k < 0,
  // top_p outside (0, 1], min_p outside [0, 1].
  core::Status validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  const SamplingParams& params() const { return params_; }
  int32_t sample(std::span<const float> logits);

  // The argmax with ties to the lowest id (greedy decoding).
  static int32_t argmax(std::span<const float> logits);

 private:
  void gather_at_least(std::span<const float> logits, float t);
  float threshold_for_count(std::span<const float> logits, float max_logit, int64_t k);
  float threshold_for_mass(std::span<const float> logits, float max_logit, double mass);
  double vocab_weights(std::span<const float> logits, float max_logit, float inv_t);
  int32_t draw_all(std::span<const float> logits, int32_t best);
  void keep_top_p();
  void keep_top_p_of_vocabulary();
  void keep_min_p();
  int32_t draw();

  SamplingParams params_;
  core::Rng rng_;
  // The surviving candidates (logit, id): in id order as gathered; after top-k sorted largest
  // first.
  std::vector<std::pair<float, int32_t>> cand_;
  std::vector<double> probs_;
  // Weights of the whole vocabulary (draw_all: at the temperature; top-p: at 1), their lanes'
  // sums, and (top-p without top-k) their total, else 0.
  std::vector<float> weights_;
  VocabLanes lanes_{};
  double top_p_total_ = 0.0;
};

}  // namespace anchorage::engine

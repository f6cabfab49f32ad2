// Tensor enumeration and the random init (docs/model.md "Random weights").
#include "model/qwen35/tensors.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/rng.h"

namespace anchorage::model::qwen35 {

std::vector<TensorSlot> tensor_slots(const Qwen35Config& c) {
  const int64_t H = c.hidden_size, n_v = c.linear_num_value_heads;
  const int64_t qd = c.num_attention_heads * c.head_dim;
  const int64_t kvd = c.num_key_value_heads * c.head_dim;
  const int64_t F = c.intermediate_size;
  std::vector<TensorSlot> s;
  s.push_back({-1, TensorRole::kEmbed, c.vocab_size, H});
  if (!c.tie_word_embeddings) s.push_back({-1, TensorRole::kLmHead, c.vocab_size, H});
  s.push_back({-1, TensorRole::kFinalNorm, H, 1});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    s.push_back({l, TensorRole::kInputNorm, H, 1});
    if (c.is_full_attention(l)) {
      s.push_back({l, TensorRole::kAttnQ, 2 * qd, H});
      s.push_back({l, TensorRole::kAttnK, kvd, H});
      s.push_back({l, TensorRole::kAttnV, kvd, H});
      s.push_back({l, TensorRole::kAttnQNorm, c.head_dim, 1});
      s.push_back({l, TensorRole::kAttnKNorm, c.head_dim, 1});
      s.push_back({l, TensorRole::kAttnO, H, qd});
    } else {
      s.push_back({l, TensorRole::kGdnQkv, c.conv_dim(), H});
      s.push_back({l, TensorRole::kGdnZ, c.value_dim(), H});
      s.push_back({l, TensorRole::kGdnB, n_v, H});
      s.push_back({l, TensorRole::kGdnA, n_v, H});
      s.push_back({l, TensorRole::kGdnConv, c.linear_conv_kernel_dim, c.conv_dim()});
      s.push_back({l, TensorRole::kGdnDtBias, n_v, 1});
      s.push_back({l, TensorRole::kGdnSsmA, n_v, 1});
      s.push_back({l, TensorRole::kGdnNorm, c.linear_value_head_dim, 1});
      s.push_back({l, TensorRole::kGdnOut, H, c.value_dim()});
    }
    s.push_back({l, TensorRole::kPostNorm, H, 1});
    if (c.is_moe_layer(l)) {
      const int64_t E = c.num_experts, Fe = c.moe_intermediate_size;
      const int64_t Fsh = c.shared_expert_intermediate_size;
      s.push_back({l, TensorRole::kMoeRouter, E, H});
      s.push_back({l, TensorRole::kMoeGateExps, E * Fe, H});
      s.push_back({l, TensorRole::kMoeUpExps, E * Fe, H});
      s.push_back({l, TensorRole::kMoeDownExps, E * H, Fe});
      if (Fsh > 0) {
        s.push_back({l, TensorRole::kMoeSharedGate, Fsh, H});
        s.push_back({l, TensorRole::kMoeSharedUp, Fsh, H});
        s.push_back({l, TensorRole::kMoeSharedDown, H, Fsh});
        s.push_back({l, TensorRole::kMoeSharedScale, H, 1});
      }
    } else {
      s.push_back({l, TensorRole::kFfnGate, F, H});
      s.push_back({l, TensorRole::kFfnUp, F, H});
      s.push_back({l, TensorRole::kFfnDown, H, F});
    }
  }
  return s;
}

namespace {

uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Values are drawn in blocks with their own generator, seeded from (seed, tensor, block), so
// a fill could be split over threads without changing a bit.
constexpr int64_t kInitBlock = int64_t(1) << 16;

// x[i] = lo + (hi - lo) * u, u uniform in [0, 1): cheap and exact to reproduce (uniforms with
// the variance of the wanted normal, instead of Box-Muller's log and cos per value: `small`
// has 130M weights).
// Elements [e0, e1) of the tensor, written to x[0, e1 - e0): a block begun before e0 draws
// its first values and drops them.
void fill_uniform(float* x, int64_t e0, int64_t e1, double lo, double hi, uint64_t seed,
                  int64_t index) {
  const uint64_t tensor_seed = splitmix(seed ^ splitmix(uint64_t(index) + 0x5851f42d4c957f2dull));
  for (int64_t b0 = e0 / kInitBlock * kInitBlock; b0 < e1; b0 += kInitBlock) {
    core::Rng rng(splitmix(tensor_seed + uint64_t(b0 / kInitBlock)));
    for (int64_t i = b0; i < e0; ++i) rng.uniform();
    const int64_t b1 = std::min(e1, b0 + kInitBlock);
    for (int64_t i = std::max(b0, e0); i < b1; ++i)
      x[i - e0] = float(lo + (hi - lo) * rng.uniform());
  }
}

// Zero-mean uniform with standard deviation sd.
void fill_sd(float* x, int64_t e0, int64_t e1, double sd, uint64_t seed, int64_t index) {
  const double half = std::sqrt(3.0) * sd;
  fill_uniform(x, e0, e1, -half, half, seed, index);
}

}  // namespace

std::vector<float> random_tensor(const Qwen35Config& c, const TensorSlot& slot, uint64_t seed,
                                 int64_t index) {
  std::vector<float> x(size_t(slot.elements()));
  random_tensor_rows(c, slot, seed, index, 0, slot.rows, x.data());
  return x;
}

void random_tensor_rows(const Qwen35Config& c, const TensorSlot& slot, uint64_t seed, int64_t index,
                        int64_t r0, int64_t r1, float* p) {
  const int64_t e0 = r0 * slot.cols, e1 = r1 * slot.cols, n = e1 - e0;
  const double fan_in = double(slot.cols);
  // Output projections feed the residual stream: 1/sqrt(2L) keeps its growth over 2L adds
  // near one (GPT-2's residual scaling).
  const double residual_scale = 1.0 / std::sqrt(2.0 * double(c.num_hidden_layers));
  switch (slot.role) {
    case TensorRole::kEmbed:
    case TensorRole::kLmHead:
      // Logit std ~= sd * sqrt(H) * rms(h_final) ~= 2: peaked enough to differ, not one-hot.
      fill_sd(p, e0, e1, 2.0 / std::sqrt(double(c.hidden_size)), seed, index);
      break;
    case TensorRole::kFinalNorm:
    case TensorRole::kInputNorm:
    case TensorRole::kPostNorm:
    case TensorRole::kAttnQNorm:
    case TensorRole::kAttnKNorm:
    case TensorRole::kGdnNorm:
      fill_uniform(p, e0, e1, 0.9, 1.1, seed, index);  // plain weights: 1 + small noise
      break;
    case TensorRole::kGdnQkv:
    case TensorRole::kGdnZ:
    case TensorRole::kGdnB:
    case TensorRole::kGdnA:
    case TensorRole::kAttnQ:
    case TensorRole::kAttnK:
    case TensorRole::kAttnV:
    case TensorRole::kFfnGate:
    case TensorRole::kFfnUp:
    case TensorRole::kMoeGateExps:
    case TensorRole::kMoeUpExps:
    case TensorRole::kMoeSharedGate:
    case TensorRole::kMoeSharedUp:
      fill_sd(p, e0, e1, 1.0 / std::sqrt(fan_in), seed, index);
      break;
    case TensorRole::kMoeRouter:
      // Router logits with std ~1.5: the top-k differ from token to token, ties are rare.
      fill_sd(p, e0, e1, 1.5 / std::sqrt(fan_in), seed, index);
      break;
    case TensorRole::kMoeSharedScale:
      // A vector (cols = 1): the shared gate logit sigmoid(w . u) has std ~1 over u.
      fill_sd(p, e0, e1, 1.0 / std::sqrt(double(c.hidden_size)), seed, index);
      break;
    case TensorRole::kGdnOut:
    case TensorRole::kAttnO:
    case TensorRole::kFfnDown:
    case TensorRole::kMoeDownExps:
    case TensorRole::kMoeSharedDown:
      fill_sd(p, e0, e1, residual_scale / std::sqrt(fan_in), seed, index);
      break;
    case TensorRole::kGdnConv:
      fill_sd(p, e0, e1, 1.0 / std::sqrt(double(c.linear_conv_kernel_dim)), seed, index);
      break;
    case TensorRole::kGdnDtBias:
      fill_uniform(p, e0, e1, -5.7, 19.3, seed, index);  // §2.5's observed range of dt_bias
      break;
    case TensorRole::kGdnSsmA:
      // §2.5: -exp(A_log) observed in about [-0.34, -0.004]; log-uniform over that range.
      fill_uniform(p, e0, e1, std::log(0.004), std::log(0.34), seed, index);
      for (int64_t i = 0; i < n; ++i) p[i] = -std::exp(p[i]);
      break;
  }
}

Qwen35Tensors random_tensors(const Qwen35Config& cfg, uint64_t seed, core::ThreadPool* pool) {
  Qwen35Tensors t;
  t.cfg = cfg;
  t.slots = tensor_slots(cfg);
  t.data.resize(t.slots.size());
  core::parallel_for(pool, int64_t(t.slots.size()), [&](int64_t i) {
    t.data[size_t(i)] = random_tensor(cfg, t.slots[size_t(i)], seed, i);
  });
  return t;
}

namespace {

int64_t find_slot(const std::vector<TensorSlot>& slots, int64_t layer, TensorRole role) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].layer == layer && slots[i].role == role) return int64_t(i);
  }
  return -1;
}

}  // namespace

bool Qwen35Tensors::has(int64_t layer, TensorRole role) const {
  return find_slot(slots, layer, role) >= 0;
}

std::vector<float>& Qwen35Tensors::at(int64_t layer, TensorRole role) {
  const int64_t i = find_slot(slots, layer, role);
  ANCHORAGE_CHECK(i >= 0);
  return data[size_t(i)];
}

const std::vector<float>& Qwen35Tensors::at(int64_t layer, TensorRole role) const {
  const int64_t i = find_slot(slots, layer, role);
  ANCHORAGE_CHECK(i >= 0);
  return data[size_t(i)];
}

}  // namespace anchorage::model::qwen35

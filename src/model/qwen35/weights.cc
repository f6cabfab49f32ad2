// Placing tensors into Qwen35Weights.
#include "model/qwen35/weights.h"

#include "core/check.h"

namespace anchorage::model::qwen35 {

Qwen35Weights empty_weights(const Qwen35Config& cfg) {
  Qwen35Weights w;
  w.layers.resize(size_t(cfg.num_hidden_layers));
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    if (cfg.is_full_attention(l)) {
      w.layers[size_t(l)].mixer.emplace<AttentionWeights>();
    } else {
      w.layers[size_t(l)].mixer.emplace<GdnWeights>();
    }
  }
  return w;
}

void place_tensor(const TensorSlot& s, const float* data, core::DType dtype, Qwen35Weights* w) {
  auto pack = [&](kernels::PackedWeight* dst) {
    *dst = kernels::PackedWeight(data, s.rows, s.cols, dtype);
  };
  auto copy = [&](std::vector<float>* dst) { dst->assign(data, data + s.elements()); };
  if (s.layer < 0) {
    switch (s.role) {
      case TensorRole::kEmbed:
        return pack(&w->embed);
      case TensorRole::kLmHead:
        return pack(&w->lm_head);
      case TensorRole::kFinalNorm:
        return copy(&w->final_norm);
      default:
        ANCHORAGE_CHECK_MSG(false, "per-layer role without a layer");
    }
  }
  LayerWeights& L = w->layers[size_t(s.layer)];
  if (s.role == TensorRole::kInputNorm) return copy(&L.input_norm);
  if (s.role == TensorRole::kPostNorm) return copy(&L.post_norm);
  if (auto* f = std::get_if<DenseFfnWeights>(&L.ffn)) {
    if (s.role == TensorRole::kFfnGate) return pack(&f->gate);
    if (s.role == TensorRole::kFfnUp) return pack(&f->up);
    if (s.role == TensorRole::kFfnDown) return pack(&f->down);
  }
  if (auto* g = std::get_if<GdnWeights>(&L.mixer)) {
    switch (s.role) {
      case TensorRole::kGdnQkv:
        return pack(&g->in_proj_qkv);
      case TensorRole::kGdnZ:
        return pack(&g->in_proj_z);
      case TensorRole::kGdnB:
        return pack(&g->in_proj_b);
      case TensorRole::kGdnA:
        return pack(&g->in_proj_a);
      case TensorRole::kGdnConv:
        return copy(&g->conv);
      case TensorRole::kGdnDtBias:
        return copy(&g->dt_bias);
      case TensorRole::kGdnSsmA:
        return copy(&g->ssm_a);
      case TensorRole::kGdnNorm:
        return copy(&g->norm);
      case TensorRole::kGdnOut:
        return pack(&g->out_proj);
      default:
        break;
    }
  }
  if (auto* a = std::get_if<AttentionWeights>(&L.mixer)) {
    switch (s.role) {
      case TensorRole::kAttnQ:
        return pack(&a->q_proj);
      case TensorRole::kAttnK:
        return pack(&a->k_proj);
      case TensorRole::kAttnV:
        return pack(&a->v_proj);
      case TensorRole::kAttnQNorm:
        return copy(&a->q_norm);
      case TensorRole::kAttnKNorm:
        return copy(&a->k_norm);
      case TensorRole::kAttnO:
        return pack(&a->o_proj);
      default:
        break;
    }
  }
  ANCHORAGE_CHECK_MSG(false, "tensor role does not match the layer kind");
}

int64_t decode_weight_bytes(const Qwen35Weights& w) {
  auto vec = [](const std::vector<float>& v) { return int64_t(v.size() * sizeof(float)); };
  int64_t n = w.head().storage_bytes() + vec(w.final_norm);
  for (const LayerWeights& L : w.layers) {
    n += vec(L.input_norm) + vec(L.post_norm);
    if (const auto* g = std::get_if<GdnWeights>(&L.mixer)) {
      n += g->in_proj_qkv.storage_bytes() + g->in_proj_z.storage_bytes() +
           g->in_proj_b.storage_bytes() + g->in_proj_a.storage_bytes() + vec(g->conv) +
           vec(g->dt_bias) + vec(g->ssm_a) + vec(g->norm) + g->out_proj.storage_bytes();
    } else {
      const auto& a = std::get<AttentionWeights>(L.mixer);
      n += a.q_proj.storage_bytes() + a.k_proj.storage_bytes() + a.v_proj.storage_bytes() +
           vec(a.q_norm) + vec(a.k_norm) + a.o_proj.storage_bytes();
    }
    const auto& f = std::get<DenseFfnWeights>(L.ffn);
    n += f.gate.storage_bytes() + f.up.storage_bytes() + f.down.storage_bytes();
  }
  return n;
}

}  // namespace anchorage::model::qwen35

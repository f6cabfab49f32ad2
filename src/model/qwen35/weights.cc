// Placing tensors into Qwen35Weights, from f32 (place_tensor) or raw typed rows
// (place_tensor_raw, the GGUF loader's path).
#include "model/qwen35/weights.h"

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "kernels/quant.h"

namespace anchorage::model::qwen35 {

using core::DType;
using kernels::PackedWeight;

Qwen35Weights empty_weights(const Qwen35Config& cfg) {
  Qwen35Weights w;
  w.arena = std::make_shared<core::HugePageArena>();
  w.layers.resize(size_t(cfg.num_hidden_layers));
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    LayerWeights& L = w.layers[size_t(l)];
    if (cfg.is_full_attention(l)) {
      L.mixer.emplace<AttentionWeights>();
    } else {
      L.mixer.emplace<GdnWeights>();
    }
    if (cfg.is_moe_layer(l)) {
      MoeFfnWeights& m = L.ffn.emplace<MoeFfnWeights>();
      m.experts.resize(size_t(cfg.num_experts));
      m.top_k = cfg.num_experts_per_tok;
    } else {
      L.ffn.emplace<DenseFfnWeights>();
    }
  }
  return w;
}

namespace {

// One tensor's data as it arrives: rows of `type`, `cols` elements each.
struct Source {
  const void* data;
  DType type;
  int64_t cols;
  DType storage;  // what linear layers are packed as
  PackedWeight::Arena arena;
  std::shared_ptr<const void> keep;  // when set, the rows outlive the load: read in place

  const uint8_t* row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + r * core::dtype_row_bytes(type, cols);
  }
  // Rows [r0, r0 + n) as one linear layer.
  PackedWeight pack(int64_t r0, int64_t n) const {
    if (keep && type == storage)
      return PackedWeight::over_rows(row(r0), type, n, cols, keep, arena);
    if (type == DType::kF32 && storage != DType::kF32) {
      return PackedWeight(reinterpret_cast<const float*>(row(r0)), n, cols, storage, arena);
    }
    return PackedWeight::from_rows(row(r0), type, n, cols, storage, arena);
  }
  // The first `elements` values as f32 (whole rows, back to back).
  std::vector<float> vec(int64_t elements) const {
    std::vector<float> v(static_cast<size_t>(elements));
    kernels::dequantize_row(type, data, v.data(), elements);
    return v;
  }
};

// A quantized type needs its block to divide K; otherwise Q8_0 (32), otherwise f32.
DType storage_for(DType want, int64_t cols) {
  if (cols % core::dtype_block_elements(want) == 0) return want;
  if (core::dtype_is_quantized(want) && cols % core::dtype_block_elements(DType::kQ8_0) == 0)
    return DType::kQ8_0;
  return DType::kF32;
}

void place_moe(const TensorSlot& s, const Source& src, MoeFfnWeights* m) {
  const int64_t E = int64_t(m->experts.size());
  switch (s.role) {
    case TensorRole::kMoeRouter:
      m->router = src.pack(0, s.rows);
      return;
    case TensorRole::kMoeGateExps:
    case TensorRole::kMoeUpExps:
    case TensorRole::kMoeDownExps: {
      ANCHORAGE_CHECK(E > 0 && s.rows % E == 0);
      const int64_t per = s.rows / E;
      for (int64_t e = 0; e < E; ++e) {
        DenseFfnWeights& x = m->experts[size_t(e)];
        PackedWeight* dst = s.role == TensorRole::kMoeGateExps ? &x.gate
                            : s.role == TensorRole::kMoeUpExps ? &x.up
                                                               : &x.down;
        *dst = src.pack(e * per, per);
      }
      return;
    }
    case TensorRole::kMoeSharedGate:
      m->shared.gate = src.pack(0, s.rows);
      return;
    case TensorRole::kMoeSharedUp:
      m->shared.up = src.pack(0, s.rows);
      return;
    case TensorRole::kMoeSharedDown:
      m->shared.down = src.pack(0, s.rows);
      return;
    case TensorRole::kMoeSharedScale: {
      const std::vector<float> v = src.vec(s.elements());
      m->shared_scale = PackedWeight(v.data(), 1, s.elements(), DType::kF32, src.arena);
      return;
    }
    default:
      ANCHORAGE_CHECK_MSG(false, "tensor role does not match the layer's MoE FFN");
  }
}

void place(const TensorSlot& s, const Source& src, Qwen35Weights* w) {
  auto pack = [&](PackedWeight* dst) { *dst = src.pack(0, s.rows); };
  auto copy = [&](std::vector<float>* dst) { *dst = src.vec(s.elements()); };
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
  if (auto* m = std::get_if<MoeFfnWeights>(&L.ffn)) {
    if (s.role >= TensorRole::kMoeRouter && s.role <= TensorRole::kMoeSharedScale)
      return place_moe(s, src, m);
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

}  // namespace

void place_tensor(const TensorSlot& s, const float* data, DType dtype, Qwen35Weights* w) {
  place(s, Source{data, DType::kF32, s.cols, storage_for(dtype, s.cols), w->arena, nullptr}, w);
}

void place_tensor_rows(const TensorSlot& s, DType dtype,
                       const std::function<void(int64_t, int64_t, float*)>& rows,
                       Qwen35Weights* w) {
  if (s.layer < 0 && (s.role == TensorRole::kEmbed || s.role == TensorRole::kLmHead)) {
    PackedWeight* dst = s.role == TensorRole::kEmbed ? &w->embed : &w->lm_head;
    *dst = PackedWeight::from_f32_rows(s.rows, s.cols, storage_for(dtype, s.cols), w->arena, rows);
    return;
  }
  core::AlignedBuffer data(size_t(s.elements()) * sizeof(float),
                           core::AlignedBuffer::Pages::kHugeWhenLarge,
                           core::AlignedBuffer::Fill::kNone);
  rows(0, s.rows, data.as<float>());
  place_tensor(s, data.as<float>(), dtype, w);
}

void place_tensor_raw(const TensorSlot& s, const void* data, DType src_type, Qwen35Weights* w,
                      std::shared_ptr<const void> keep) {
  place(s, Source{data, src_type, s.cols, src_type, w->arena, std::move(keep)}, w);
}

std::vector<PackedWeight> linear_weights(const Qwen35Weights& w) {
  std::vector<PackedWeight> out;
  auto add = [&](const PackedWeight& p) {
    if (p.rows() > 0) out.push_back(p);
  };
  auto dense = [&](const DenseFfnWeights& f) {
    add(f.gate);
    add(f.up);
    add(f.down);
  };
  add(w.embed);
  for (const LayerWeights& L : w.layers) {
    if (const auto* g = std::get_if<GdnWeights>(&L.mixer)) {
      for (const PackedWeight* p :
           {&g->in_proj_qkv, &g->in_proj_z, &g->in_proj_b, &g->in_proj_a, &g->out_proj})
        add(*p);
    } else {
      const auto& a = std::get<AttentionWeights>(L.mixer);
      for (const PackedWeight* p : {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj}) add(*p);
    }
    if (const auto* f = std::get_if<DenseFfnWeights>(&L.ffn)) {
      dense(*f);
    } else {
      const auto& m = std::get<MoeFfnWeights>(L.ffn);
      add(m.router);
      dense(m.shared);
      add(m.shared_scale);
      for (const DenseFfnWeights& e : m.experts) dense(e);
    }
  }
  add(w.lm_head);
  return out;
}

int64_t decode_weight_bytes(const Qwen35Weights& w) {
  auto vec = [](const std::vector<float>& v) { return int64_t(v.size() * sizeof(float)); };
  auto dense = [](const DenseFfnWeights& f) {
    return f.gate.storage_bytes() + f.up.storage_bytes() + f.down.storage_bytes();
  };
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
    if (const auto* f = std::get_if<DenseFfnWeights>(&L.ffn)) {
      n += dense(*f);
    } else {
      // A decode step reads the router, the shared expert and top-k of the E experts; the
      // experts are counted at that average share.
      const auto& m = std::get<MoeFfnWeights>(L.ffn);
      int64_t experts = 0;
      for (const DenseFfnWeights& e : m.experts) experts += dense(e);
      n += m.router.storage_bytes() + dense(m.shared) + m.shared_scale.storage_bytes();
      n += m.experts.empty() ? 0 : experts / int64_t(m.experts.size()) * m.top_k;
    }
  }
  return n;
}

}  // namespace anchorage::model::qwen35

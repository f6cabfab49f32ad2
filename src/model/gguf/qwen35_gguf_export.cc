// Qwen35Tensors -> GGUF (the inverse of qwen35_gguf_loader.cc).
#include "model/gguf/qwen35_gguf_export.h"

#include <cstring>

#include "kernels/quant.h"
#include "model/gguf/ggml_type.h"
#include "model/gguf/qwen35_gguf_names.h"
#include "model/gguf/value_head_order.h"

namespace anchorage::model::gguf {

using core::DType;
using core::Status;
using qwen35::Qwen35Config;
using qwen35::Qwen35Tensors;
using qwen35::TensorRole;
using qwen35::TensorSlot;

DType export_linear_type(DType requested, int64_t cols) {
  if (cols % core::dtype_block_elements(requested) == 0) return requested;
  if (cols % core::dtype_block_elements(DType::kQ8_0) == 0) return DType::kQ8_0;
  return DType::kF32;
}

namespace {

// llama.cpp's general.file_type (LLAMA_FTYPE_*) of a file whose linear layers are `t`.
uint32_t file_type_of(DType t) {
  switch (t) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kQ8_0:
      return 7;
    case DType::kQ4_K:
      return 15;  // MOSTLY_Q4_K_M
    case DType::kQ6_K:
      return 18;
    case DType::kBF16:
      return 32;
    case DType::kQ4_0:
      return 2;
    case DType::kQ4_1:
      return 3;
    case DType::kQ5_0:
      return 8;
    case DType::kQ5_1:
      return 9;
    case DType::kQ2_K:
      return 10;
    case DType::kQ3_K:
      return 12;  // MOSTLY_Q3_K_M
    case DType::kQ5_K:
      return 17;  // MOSTLY_Q5_K_M
    case DType::kIQ4_NL:
      return 25;
    case DType::kIQ4_XS:
      return 30;
  }
  return 0;
}

bool is_vector_like(const TensorSlot& s) {
  return s.cols == 1 || s.role == TensorRole::kGdnConv;
}

// [rows][cols] f32 as `type` rows; `readback` (same size) gets the stored values.
std::vector<uint8_t> encode(const float* x, int64_t rows, int64_t cols, DType type,
                            float* readback) {
  const int64_t rb = core::dtype_row_bytes(type, cols);
  std::vector<uint8_t> out(size_t(rows * rb));
  for (int64_t i = 0; i < rows; ++i) {
    kernels::quantize_row(type, x + i * cols, out.data() + i * rb, cols);
    kernels::dequantize_row(type, out.data() + i * rb, readback + i * cols, cols);
  }
  return out;
}

// Rows `idx` of a [rows][cols] matrix.
std::vector<float> gather_rows(const std::vector<float>& x, int64_t cols,
                               const std::vector<int64_t>& idx) {
  std::vector<float> out(idx.size() * size_t(cols));
  for (size_t i = 0; i < idx.size(); ++i) {
    std::memcpy(out.data() + int64_t(i) * cols, x.data() + idx[i] * cols, size_t(cols) * 4);
  }
  return out;
}

void write_metadata(const Qwen35Config& c, const GgufExportOptions& o, GgufWriter* w) {
  const std::string& a = o.arch;
  auto k = [&](const char* s) { return arch_key(a, s); };
  auto u32 = [](int64_t v) { return GgufValue::u32(uint32_t(v)); };
  w->add("general.architecture", GgufValue::string(a));
  w->add("general.name", GgufValue::string(o.name));
  w->add("general.alignment", GgufValue::u32(32));
  w->add("general.file_type", GgufValue::u32(file_type_of(o.weight_type)));
  if (core::dtype_is_quantized(o.weight_type)) {
    w->add("general.quantization_version", GgufValue::u32(2));
  }
  w->add(k("block_count"), u32(c.num_hidden_layers));
  w->add(k("context_length"), u32(c.max_position_embeddings));
  w->add(k("embedding_length"), u32(c.hidden_size));
  if (c.intermediate_size > 0) w->add(k("feed_forward_length"), u32(c.intermediate_size));
  w->add(k("attention.head_count"), u32(c.num_attention_heads));
  w->add(k("attention.head_count_kv"), u32(c.num_key_value_heads));
  w->add(k("attention.key_length"), u32(c.head_dim));
  w->add(k("attention.value_length"), u32(c.head_dim));
  w->add(k("attention.layer_norm_rms_epsilon"), GgufValue::f32(float(c.rms_norm_eps)));
  w->add(k("rope.dimension_count"), u32(c.rotary_dim()));
  w->add(k("rope.freq_base"), GgufValue::f32(float(c.rope_theta)));
  if (a != "qwen3next") {
    // mrope_section: the converter's default when a config has none (§6.2).
    w->add(k("rope.dimension_sections"), GgufValue::int_array(GgufType::kI32, {11, 11, 10, 0}));
  }
  w->add(k("full_attention_interval"), u32(c.full_attention_interval));
  bool interval_rule = c.full_attention_interval > 0;
  std::vector<int64_t> recurrent;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const bool gdn = !c.is_full_attention(l);
    recurrent.push_back(gdn ? 1 : 0);
    if (interval_rule && gdn != ((l + 1) % c.full_attention_interval != 0)) interval_rule = false;
  }
  if (!interval_rule) {
    w->add(k("attention.recurrent_layers"), GgufValue::int_array(GgufType::kBool, recurrent));
  }
  w->add(k("ssm.conv_kernel"), u32(c.linear_conv_kernel_dim));
  w->add(k("ssm.state_size"), u32(c.linear_key_head_dim));
  w->add(k("ssm.group_count"), u32(c.linear_num_key_heads));
  w->add(k("ssm.time_step_rank"), u32(c.linear_num_value_heads));
  w->add(k("ssm.inner_size"), u32(c.value_dim()));
  if (c.num_experts > 0) {
    w->add(k("expert_count"), u32(c.num_experts));
    w->add(k("expert_used_count"), u32(c.num_experts_per_tok));
    w->add(k("expert_feed_forward_length"), u32(c.moe_intermediate_size));
    w->add(k("expert_shared_feed_forward_length"), u32(c.shared_expert_intermediate_size));
  }
}

}  // namespace

Status export_qwen35_gguf(const Qwen35Tensors& in, const GgufExportOptions& o, GgufWriter* w,
                          Qwen35Tensors* stored) {
  if (!is_qwen35_family(o.arch)) {
    return Status::invalid_argument("gguf export: architecture '" + o.arch +
                                    "' (qwen35, qwen35moe, qwen3next)");
  }
  if (o.legacy_ssm_in && o.arch != "qwen3next") {
    return Status::invalid_argument("gguf export: legacy ssm_in exists only for qwen3next");
  }
  if (!in.cfg.mlp_only_layers.empty() || in.cfg.decoder_sparse_step != 1) {
    return Status::unsupported("gguf export: mlp_only_layers / decoder_sparse_step have no key");
  }
  Qwen35Tensors t = with_value_heads_tiled(in, arch_tiles_value_heads(o.arch));
  const Qwen35Config& c = t.cfg;
  write_metadata(c, o, w);
  const int64_t H = c.hidden_size, n_k = c.linear_num_key_heads, r = c.r();
  const int64_t d_k = c.linear_key_head_dim, d_v = c.linear_value_head_dim;
  const bool next = o.arch == "qwen3next";

  // Readback of every slot (the stored values), filled as tensors are encoded.
  std::vector<std::vector<float>> back(t.slots.size());
  auto slot_index = [&](int64_t layer, TensorRole role) -> size_t {
    for (size_t i = 0; i < t.slots.size(); ++i)
      if (t.slots[i].layer == layer && t.slots[i].role == role) return i;
    return t.slots.size();
  };
  // Encodes `rows` of a [*][cols] f32 matrix as one tensor; returns the readback rows.
  auto put_matrix = [&](const std::string& name, std::vector<int64_t> ne,
                        const std::vector<float>& x, int64_t cols, DType type) {
    const int64_t rows = int64_t(x.size()) / cols;
    std::vector<float> rb(x.size());
    w->add_tensor(name, std::move(ne), ggml_of_dtype(type),
                  encode(x.data(), rows, cols, type, rb.data()));
    return rb;
  };

  for (size_t i = 0; i < t.slots.size(); ++i) {
    const TensorSlot& s = t.slots[i];
    if (!back[i].empty()) continue;  // written with a fused tensor
    const std::vector<float>& x = t.data[i];
    const int64_t l = s.layer;
    if (is_vector_like(s)) {
      std::vector<float> data = x;
      int64_t cols = s.cols;
      if (s.role == TensorRole::kGdnConv) {  // ours [K][conv_dim] -> file [conv_dim][K]
        const int64_t K = s.rows, C = s.cols;
        for (int64_t k = 0; k < K; ++k)
          for (int64_t ch = 0; ch < C; ++ch) data[size_t(ch * K + k)] = x[size_t(k * C + ch)];
        cols = K;
      }
      put_matrix(tensor_name(s.role, l), gguf_shape(c, s), data, cols, DType::kF32);
      back[i] = x;  // f32 is exact
      continue;
    }
    const DType type = export_linear_type(
        o.mixed_types.empty() ? o.weight_type : o.mixed_types[i % o.mixed_types.size()], s.cols);
    if (next && (s.role == TensorRole::kGdnB || s.role == TensorRole::kGdnA)) {
      // ssm_ba: per key head g, [b (r heads) | a (r heads)].
      const size_t ib = slot_index(l, TensorRole::kGdnB), ia = slot_index(l, TensorRole::kGdnA);
      std::vector<float> fused;
      for (int64_t g = 0; g < n_k; ++g) {
        for (int64_t ab = 0; ab < 2; ++ab) {
          for (int64_t u = 0; u < r; ++u) {
            const std::vector<float>& src = t.data[ab == 0 ? ib : ia];
            const float* row = src.data() + (g * r + u) * H;
            fused.insert(fused.end(), row, row + H);
          }
        }
      }
      const std::vector<float> rb = put_matrix(layer_tensor_name(l, "ssm_ba.weight"),
                                               {H, 2 * c.linear_num_value_heads}, fused, H, type);
      std::vector<int64_t> bi, ai;
      for (int64_t g = 0; g < n_k; ++g)
        for (int64_t u = 0; u < r; ++u) {
          bi.push_back(g * 2 * r + u);
          ai.push_back(g * 2 * r + r + u);
        }
      back[ib] = gather_rows(rb, H, bi);
      back[ia] = gather_rows(rb, H, ai);
      continue;
    }
    if (o.legacy_ssm_in && (s.role == TensorRole::kGdnQkv || s.role == TensorRole::kGdnZ)) {
      const size_t iq = slot_index(l, TensorRole::kGdnQkv), iz = slot_index(l, TensorRole::kGdnZ);
      const int64_t kd = c.key_dim(), G = 2 * d_k + 2 * r * d_v;
      // fused row of each source row: qkv rows then z rows.
      std::vector<int64_t> qkv_at, z_at;
      std::vector<float> fused(size_t(n_k * G * H));
      auto put_row = [&](int64_t dst, const float* src) {
        std::memcpy(fused.data() + dst * H, src, size_t(H) * 4);
      };
      for (int64_t g = 0; g < n_k; ++g) {
        for (int64_t u = 0; u < d_k; ++u) put_row(g * G + u, t.data[iq].data() + (g * d_k + u) * H);
        for (int64_t u = 0; u < d_k; ++u)
          put_row(g * G + d_k + u, t.data[iq].data() + (kd + g * d_k + u) * H);
        for (int64_t u = 0; u < r * d_v; ++u)
          put_row(g * G + 2 * d_k + u, t.data[iq].data() + (2 * kd + g * r * d_v + u) * H);
        for (int64_t u = 0; u < r * d_v; ++u)
          put_row(g * G + 2 * d_k + r * d_v + u, t.data[iz].data() + (g * r * d_v + u) * H);
      }
      for (int64_t g = 0; g < n_k; ++g)
        for (int64_t u = 0; u < d_k; ++u) qkv_at.push_back(g * G + u);
      for (int64_t g = 0; g < n_k; ++g)
        for (int64_t u = 0; u < d_k; ++u) qkv_at.push_back(g * G + d_k + u);
      for (int64_t g = 0; g < n_k; ++g)
        for (int64_t u = 0; u < r * d_v; ++u) qkv_at.push_back(g * G + 2 * d_k + u);
      for (int64_t g = 0; g < n_k; ++g)
        for (int64_t u = 0; u < r * d_v; ++u) z_at.push_back(g * G + 2 * d_k + r * d_v + u);
      const std::vector<float> rb =
          put_matrix(layer_tensor_name(l, "ssm_in.weight"), {H, n_k * G}, fused, H, type);
      back[iq] = gather_rows(rb, H, qkv_at);
      back[iz] = gather_rows(rb, H, z_at);
      continue;
    }
    if (o.fused_attn_qkv && (s.role == TensorRole::kAttnQ || s.role == TensorRole::kAttnK ||
                             s.role == TensorRole::kAttnV)) {
      const size_t iq = slot_index(l, TensorRole::kAttnQ), ik = slot_index(l, TensorRole::kAttnK),
                   iv = slot_index(l, TensorRole::kAttnV);
      std::vector<float> fused = t.data[iq];
      fused.insert(fused.end(), t.data[ik].begin(), t.data[ik].end());
      fused.insert(fused.end(), t.data[iv].begin(), t.data[iv].end());
      const std::vector<float> rb = put_matrix(layer_tensor_name(l, "attn_qkv.weight"),
                                               {H, int64_t(fused.size()) / H}, fused, H, type);
      const size_t nq = t.data[iq].size(), nk = t.data[ik].size();
      back[iq].assign(rb.begin(), rb.begin() + std::ptrdiff_t(nq));
      back[ik].assign(rb.begin() + std::ptrdiff_t(nq), rb.begin() + std::ptrdiff_t(nq + nk));
      back[iv].assign(rb.begin() + std::ptrdiff_t(nq + nk), rb.end());
      continue;
    }
    back[i] = put_matrix(tensor_name(s.role, l), gguf_shape(c, s), x, s.cols, type);
  }
  if (stored != nullptr) {
    *stored = t;
    stored->data = std::move(back);
  }
  return Status::ok();
}

}  // namespace anchorage::model::gguf

// Permuting value-head blocks of rows, columns and conv channels.
#include "model/gguf/value_head_order.h"

#include <algorithm>

namespace anchorage::model::gguf {

using qwen35::Qwen35Tensors;
using qwen35::TensorRole;

std::vector<int64_t> tiled_to_grouped_heads(int64_t n_k, int64_t n_v) {
  const int64_t r = n_v / n_k;
  std::vector<int64_t> src(static_cast<size_t>(n_v));
  for (int64_t p = 0; p < n_v; ++p) src[size_t(p)] = (p % n_k) * r + p / n_k;
  return src;
}

namespace {

// dst head h takes src head from[h]: rows [row0 + h*blk, +blk) of a [rows][cols] matrix.
void permute_rows(std::vector<float>* x, int64_t cols, int64_t row0, int64_t blk,
                  const std::vector<int64_t>& from) {
  const std::vector<float> old = *x;
  for (size_t h = 0; h < from.size(); ++h) {
    const float* s = old.data() + (row0 + from[h] * blk) * cols;
    std::copy(s, s + blk * cols, x->data() + (row0 + int64_t(h) * blk) * cols);
  }
}

// Same for columns [col0 + h*blk, +blk) of every row.
void permute_cols(std::vector<float>* x, int64_t rows, int64_t cols, int64_t col0, int64_t blk,
                  const std::vector<int64_t>& from) {
  const std::vector<float> old = *x;
  for (int64_t i = 0; i < rows; ++i) {
    for (size_t h = 0; h < from.size(); ++h) {
      const float* s = old.data() + i * cols + col0 + from[h] * blk;
      std::copy(s, s + blk, x->data() + i * cols + col0 + int64_t(h) * blk);
    }
  }
}

}  // namespace

Qwen35Tensors with_value_heads_tiled(const Qwen35Tensors& t, bool tiled) {
  Qwen35Tensors out = t;
  if (t.cfg.value_heads_tiled == tiled) return out;
  out.cfg.value_heads_tiled = tiled;
  const auto& c = t.cfg;
  const int64_t n_k = c.linear_num_key_heads, n_v = c.linear_num_value_heads;
  const int64_t d_v = c.linear_value_head_dim, H = c.hidden_size;
  std::vector<int64_t> from = tiled_to_grouped_heads(n_k, n_v);
  if (!tiled) {  // the inverse permutation: grouped head from[p] comes from tiled p
    std::vector<int64_t> inv(from.size());
    for (size_t p = 0; p < from.size(); ++p) inv[size_t(from[p])] = int64_t(p);
    from = inv;
  }
  for (size_t i = 0; i < out.slots.size(); ++i) {
    const auto& s = out.slots[i];
    std::vector<float>* x = &out.data[i];
    switch (s.role) {
      case TensorRole::kGdnQkv:
        permute_rows(x, H, 2 * c.key_dim(), d_v, from);
        break;
      case TensorRole::kGdnZ:
        permute_rows(x, H, 0, d_v, from);
        break;
      case TensorRole::kGdnB:
      case TensorRole::kGdnA:
        permute_rows(x, H, 0, 1, from);
        break;
      case TensorRole::kGdnDtBias:
      case TensorRole::kGdnSsmA:
        permute_rows(x, 1, 0, 1, from);
        break;
      case TensorRole::kGdnConv:  // [K][conv_dim]
        permute_cols(x, c.linear_conv_kernel_dim, c.conv_dim(), 2 * c.key_dim(), d_v, from);
        break;
      case TensorRole::kGdnOut:  // [H][value_dim]
        permute_cols(x, H, c.value_dim(), 0, d_v, from);
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace anchorage::model::gguf

// Scratch: how a forward of T tokens carves its workspace (one buffer, no allocation per
// call). Every region is a multiple of 16 floats so each starts 64-byte aligned.
// Internal to qwen35_model.cc / qwen35_forward.cc.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::model::qwen35 {

struct Qwen35Model::Scratch {
  int64_t T = 0;
  float* h = nullptr;    // [T][H] residual stream, f32 (§4.1)
  float* u = nullptr;    // [T][H] normed input of a mixer / FFN / the head
  float* out = nullptr;  // [T][H] a mixer's or FFN's output before the residual add
  // GDN (§2)
  float* qkv = nullptr;    // [T][conv_dim] raw projections (conv input)
  float* z = nullptr;      // [T][value_dim]
  float* b = nullptr;      // [T][n_v]
  float* a = nullptr;      // [T][n_v]
  float* y = nullptr;      // [T][conv_dim] conv + SiLU output: q | k | v
  float* beta = nullptr;   // [T][n_v]
  float* g = nullptr;      // [T][n_v]
  float* o = nullptr;      // [T][value_dim] recurrence output
  float* gated = nullptr;  // [T][value_dim] after the gated norm
  // Attention (§3)
  float* qg = nullptr;  // [T][2 n_q D] interleaved query | gate per head
  float* q = nullptr;   // [T][n_q D] normed, rotated queries
  float* k = nullptr;   // [T][n_kv D]
  float* v = nullptr;   // [T][n_kv D]
  float* ao = nullptr;  // [T][n_q D] attention output, then gated
  // FFN (§4.2)
  float* ffn_gate = nullptr;  // [T][F], then silu(gate) * up
  float* ffn_up = nullptr;    // [T][F]

  // Lays the regions out from base (or only counts, when base is null); returns floats used.
  static int64_t carve(const Qwen35Config& c, int64_t T, float* base, Scratch* s) {
    int64_t at = 0;
    auto take = [&](int64_t width) {
      float* p = base ? base + at : nullptr;
      at += (T * width + 15) / 16 * 16;
      return p;
    };
    s->T = T;
    const int64_t H = c.hidden_size;
    s->h = take(H);
    s->u = take(H);
    s->out = take(H);
    // The mixers and the FFN run one after another: their regions overlap.
    const int64_t shared = at;
    s->qkv = take(c.conv_dim());
    s->z = take(c.value_dim());
    s->b = take(c.linear_num_value_heads);
    s->a = take(c.linear_num_value_heads);
    s->y = take(c.conv_dim());
    s->beta = take(c.linear_num_value_heads);
    s->g = take(c.linear_num_value_heads);
    s->o = take(c.value_dim());
    s->gated = take(c.value_dim());
    int64_t end = at;
    at = shared;
    const int64_t qd = c.num_attention_heads * c.head_dim;
    const int64_t kvd = c.num_key_value_heads * c.head_dim;
    s->qg = take(2 * qd);
    s->q = take(qd);
    s->k = take(kvd);
    s->v = take(kvd);
    s->ao = take(qd);
    end = std::max(end, at);
    at = shared;
    s->ffn_gate = take(c.intermediate_size);
    s->ffn_up = take(c.intermediate_size);
    return std::max(end, at);
  }
};

}  // namespace anchorage::model::qwen35

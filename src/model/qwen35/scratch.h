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
  // FFN (§4.2): widths max(F, F_e, F_sh), so the MoE experts use them too
  float* ffn_gate = nullptr;  // [T][F], then silu(gate) * up
  float* ffn_up = nullptr;    // [T][F]
  // MoE (§4.3); empty without experts
  float* moe_logits = nullptr;       // [T][E] router logits
  int32_t* moe_ids = nullptr;        // [T][k] chosen experts, by rank
  float* moe_weights = nullptr;      // [T][k] their weights
  int32_t* moe_rows = nullptr;       // [T] (token, rank) slots routed to the current expert
  float* moe_x = nullptr;            // [T][H] the rows routed to the current expert
  float* moe_y = nullptr;            // [T][H] an expert's (or the shared expert's) output
  float* moe_out = nullptr;          // [T][k][H] every (token, rank) expert output
  float* moe_shared_gate = nullptr;  // [T] the shared expert's gate logit

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
    const int64_t ffn_width =
        std::max({c.intermediate_size, c.moe_intermediate_size, c.shared_expert_intermediate_size});
    s->ffn_gate = take(ffn_width);
    s->ffn_up = take(ffn_width);
    if (c.num_experts > 0) {
      const int64_t k = c.num_experts_per_tok;
      s->moe_logits = take(c.num_experts);
      s->moe_ids = reinterpret_cast<int32_t*>(take(k));  // int32 in float-sized slots
      s->moe_weights = take(k);
      s->moe_rows = reinterpret_cast<int32_t*>(take(1));
      s->moe_x = take(H);
      s->moe_y = take(H);
      s->moe_out = take(k * H);
      s->moe_shared_gate = take(1);
    }
    return std::max(end, at);
  }
};

}  // namespace anchorage::model::qwen35

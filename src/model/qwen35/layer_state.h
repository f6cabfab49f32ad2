// The qwen35 state by name: which section and view is which (the names state_layout() gives
// them), and one layer's slices of them as named pointers. The forward reaches its state only
// through layer_state(), so the order of the layout and the per-layer offsets live here once
// (docs/model.md "State").
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "model/architecture.h"
#include "model/qwen35/config.h"

namespace anchorage::model::qwen35 {

// Positions in StateLayout::sections / ::views, and their names.
enum StateSection : size_t { kGdnS = 0, kGdnConv = 1, kNumSections = 2 };
enum StateView : size_t { kViewK = 0, kViewV = 1, kNumViews = 2 };
inline constexpr const char* kSectionNames[kNumSections] = {"gdn.S", "gdn.conv"};
inline constexpr const char* kViewNames[kNumViews] = {"K", "V"};

// A GDN layer's state (docs/model.md §2.11): its n_v matrices S_h ([d_k][d_v], HF orientation)
// and its conv tail ([K-1][conv_dim], raw projections, oldest first).
struct GdnLayerState {
  float* S = nullptr;
  float* conv_tail = nullptr;
};

// A full-attention layer's rows (docs/model.md §3.4): K transposed per head
// ([n_kv][D][capacity]) and V ([n_kv][capacity][D]), in the KV dtype.
struct AttentionLayerState {
  void* K = nullptr;
  void* V = nullptr;
};

// slot: the layer's index among the layers of its own kind.
inline GdnLayerState gdn_layer_state(const Qwen35Config& c, const StateBuffers& state,
                                     int64_t slot) {
  const int64_t s_floats =
      c.linear_num_value_heads * c.linear_key_head_dim * c.linear_value_head_dim;
  const int64_t tail_floats = (c.linear_conv_kernel_dim - 1) * c.conv_dim();
  return {static_cast<float*>(state.sections[kGdnS]) + slot * s_floats,
          static_cast<float*>(state.sections[kGdnConv]) + slot * tail_floats};
}

inline AttentionLayerState attention_layer_state(const Qwen35Config& c, core::DType kv_dtype,
                                                 const StateBuffers& state, int64_t slot) {
  const int64_t layer_bytes =
      c.num_key_value_heads * c.head_dim * state.capacity * core::dtype_size(kv_dtype);
  return {static_cast<uint8_t*>(state.views[kViewK]) + slot * layer_bytes,
          static_cast<uint8_t*>(state.views[kViewV]) + slot * layer_bytes};
}

}  // namespace anchorage::model::qwen35

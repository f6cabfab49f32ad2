// StateLayout: what a sequence's state is made of, as the caches see it (docs/architecture.md §3).
//
// - A *section* is a tensor copied whole (for qwen35: gdn.S, gdn.conv).
// - A *view* is a position-indexed tensor with a token axis (for qwen35: K, V). In a live
//   buffer the token axis has the extent of the engine's context capacity; "rows a..b" of a
//   view means the slice [a, b) along that axis, whatever the view's shape.
//
// It lives in core because the model layer, which is below the engine, declares it; the
// engine exposes it, and the caches read nothing else about a model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace anchorage::core {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // slowest axis first (row-major)
  int token_axis = -1;         // views only: the position axis; -1 for a section

  int64_t elements() const;
  int64_t bytes() const;
  // Views: bytes of one position (every axis but the token axis).
  int64_t bytes_per_token() const;
  // Views: the number of contiguous runs a slice of rows is made of (product of the axes
  // before the token axis) and the bytes of one row inside one run (product after it).
  int64_t outer_runs() const;
  int64_t inner_row_bytes() const;
  int64_t capacity() const { return token_axis < 0 ? 0 : shape[size_t(token_axis)]; }
};

struct StateLayout {
  std::vector<TensorSpec> sections;
  std::vector<TensorSpec> views;

  int64_t section_bytes() const;    // all sections, whole
  int64_t bytes_per_token() const;  // all views, one position
  const TensorSpec* find_section(std::string_view name) const;
  const TensorSpec* find_view(std::string_view name) const;
  // A short description ("gdn.S f32 [9,8,128,128]; ...") for logs and headers.
  std::string describe() const;
};

// Copies n token rows between two buffers of one view's shape whose token axes hold
// `dst_extent` and `src_extent` rows: rows [src_at, src_at + n) of src go to [dst_at,
// dst_at + n) of dst, in every run of the axes outside the token axis. The live buffer's extent
// is spec.capacity(); a packed copy's is its row count.
void copy_token_rows(const TensorSpec& spec, void* dst, int64_t dst_extent, int64_t dst_at,
                     const void* src, int64_t src_extent, int64_t src_at, int64_t n);
// Copies rows [a, b) of a view from its live buffer into dst, packed: the result has the
// view's shape with the token axis' extent replaced by b - a. dst holds
// (b - a) * spec.bytes_per_token() bytes.
void copy_rows_out(const TensorSpec& spec, const void* live, int64_t a, int64_t b, void* dst);
// The inverse: writes packed rows [a, b) back into the live buffer.
void copy_rows_in(const TensorSpec& spec, const void* src, int64_t a, int64_t b, void* live);

}  // namespace anchorage::core

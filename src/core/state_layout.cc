#include "core/state_layout.h"

#include <cstring>

#include "core/check.h"

namespace anchorage::core {

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t TensorSpec::bytes() const {
  return elements() * dtype_size(dtype);
}

int64_t TensorSpec::bytes_per_token() const {
  ANCHORAGE_CHECK(token_axis >= 0);
  return bytes() / capacity();
}

int64_t TensorSpec::outer_runs() const {
  int64_t n = 1;
  for (int i = 0; i < token_axis; ++i) n *= shape[size_t(i)];
  return n;
}

int64_t TensorSpec::inner_row_bytes() const {
  int64_t n = dtype_size(dtype);
  for (size_t i = size_t(token_axis) + 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

int64_t StateLayout::section_bytes() const {
  int64_t n = 0;
  for (const auto& s : sections) n += s.bytes();
  return n;
}

int64_t StateLayout::bytes_per_token() const {
  int64_t n = 0;
  for (const auto& v : views) n += v.bytes_per_token();
  return n;
}

const TensorSpec* StateLayout::find_section(std::string_view name) const {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

const TensorSpec* StateLayout::find_view(std::string_view name) const {
  for (const auto& v : views)
    if (v.name == name) return &v;
  return nullptr;
}

std::string StateLayout::describe() const {
  std::string out;
  auto add = [&](const TensorSpec& t) {
    if (!out.empty()) out += "; ";
    out += t.name + " " + std::string(dtype_name(t.dtype)) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) out += ",";
      if (int(i) == t.token_axis) out += "T:";
      out += std::to_string(t.shape[i]);
    }
    out += "]";
  };
  for (const auto& s : sections) add(s);
  for (const auto& v : views) add(v);
  return out;
}

void copy_token_rows(const TensorSpec& spec, void* dst, int64_t dst_extent, int64_t dst_at,
                     const void* src, int64_t src_extent, int64_t src_at, int64_t n) {
  ANCHORAGE_CHECK(spec.token_axis >= 0 && n >= 0 && 0 <= dst_at && dst_at + n <= dst_extent &&
                  0 <= src_at && src_at + n <= src_extent);
  if (n == 0) return;  // an empty slice may come with null buffers
  const int64_t runs = spec.outer_runs();
  const int64_t row = spec.inner_row_bytes();
  const auto* from = static_cast<const uint8_t*>(src);
  auto* to = static_cast<uint8_t*>(dst);
  for (int64_t r = 0; r < runs; ++r)
    std::memcpy(to + (r * dst_extent + dst_at) * row, from + (r * src_extent + src_at) * row,
                size_t(n * row));
}

void copy_rows_out(const TensorSpec& spec, const void* live, int64_t a, int64_t b, void* dst) {
  ANCHORAGE_CHECK(0 <= a && a <= b && b <= spec.capacity());
  copy_token_rows(spec, dst, b - a, 0, live, spec.capacity(), a, b - a);
}

void copy_rows_in(const TensorSpec& spec, const void* src, int64_t a, int64_t b, void* live) {
  ANCHORAGE_CHECK(0 <= a && a <= b && b <= spec.capacity());
  copy_token_rows(spec, live, spec.capacity(), a, src, b - a, 0, b - a);
}

}  // namespace anchorage::core

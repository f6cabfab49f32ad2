#include "core/state_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace anchorage::core {
namespace {

TEST(StateLayout, BytesPerTokenAndRuns) {
  TensorSpec k{"K", DType::kF32, {3, 2, 5, 7}, 2};  // token axis in the middle
  EXPECT_EQ(k.capacity(), 5);
  EXPECT_EQ(k.outer_runs(), 6);
  EXPECT_EQ(k.inner_row_bytes(), 7 * 4);
  EXPECT_EQ(k.bytes_per_token(), 6 * 7 * 4);
  StateLayout layout;
  layout.sections.push_back({"s", DType::kBF16, {4, 4}, -1});
  layout.views.push_back(k);
  EXPECT_EQ(layout.section_bytes(), 32);
  EXPECT_EQ(layout.bytes_per_token(), 168);
  EXPECT_NE(layout.find_view("K"), nullptr);
  EXPECT_EQ(layout.find_section("K"), nullptr);
}

TEST(StateLayout, CopyRowsRoundTripsAnyTokenAxis) {
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> shape = {3, 4, 5};
    shape[size_t(axis)] = 9;  // capacity 9 along the token axis
    TensorSpec spec{"v", DType::kF32, shape, axis};
    std::vector<float> live(size_t(spec.elements()));
    std::iota(live.begin(), live.end(), 0.0f);
    std::vector<float> packed(size_t(3 * spec.bytes_per_token() / 4));
    copy_rows_out(spec, live.data(), 2, 5, packed.data());
    // Every packed element is the live element at the same index with the token shifted by 2.
    int64_t strides[3] = {shape[1] * shape[2], shape[2], 1};
    std::vector<int64_t> pshape = shape;
    pshape[size_t(axis)] = 3;
    for (int64_t i = 0; i < pshape[0]; ++i)
      for (int64_t j = 0; j < pshape[1]; ++j)
        for (int64_t l = 0; l < pshape[2]; ++l) {
          int64_t idx[3] = {i, j, l};
          int64_t packed_at = (i * pshape[1] + j) * pshape[2] + l;
          idx[axis] += 2;
          int64_t live_at = idx[0] * strides[0] + idx[1] * strides[1] + idx[2] * strides[2];
          ASSERT_EQ(packed[size_t(packed_at)], live[size_t(live_at)]) << "axis " << axis;
        }
    std::vector<float> back(live.size(), -1.0f);
    copy_rows_in(spec, packed.data(), 2, 5, back.data());
    copy_rows_out(spec, back.data(), 2, 5, packed.data());
    std::vector<float> again(packed.size());
    copy_rows_out(spec, live.data(), 2, 5, again.data());
    EXPECT_EQ(0, std::memcmp(packed.data(), again.data(), packed.size() * 4));
  }
}

}  // namespace
}  // namespace anchorage::core

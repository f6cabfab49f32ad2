// HugePageArray: every element holds the fill, large arrays too; a move hands the elements over
// and leaves the source empty.
#include "core/huge_page_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace anchorage::core {
namespace {

struct Pair {
  uint64_t key;
  int32_t a, b;
};

TEST(HugePageArray, EveryElementHoldsTheFill) {
  for (size_t n : {size_t(1), size_t(1000), size_t(300000)}) {  // 300k x 16 B: huge pages
    HugePageArray<Pair> x(n, Pair{~uint64_t{0}, -1, 7});
    ASSERT_EQ(x.size(), n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.data()) % 64, 0u);
    EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](const Pair& p) {
      return p.key == ~uint64_t{0} && p.a == -1 && p.b == 7;
    })) << n;
  }
}

TEST(HugePageArray, AMoveHandsTheElementsOver) {
  HugePageArray<int32_t> x(5000, 3);
  x[4999] = 11;
  const int32_t* at = x.data();
  HugePageArray<int32_t> y = std::move(x);
  EXPECT_TRUE(x.empty());
  EXPECT_EQ(y.data(), at);
  EXPECT_EQ(y.size(), 5000u);
  EXPECT_EQ(y[4999], 11);
  EXPECT_EQ(y[0], 3);
  x = std::move(y);
  EXPECT_EQ(x[4999], 11);
  EXPECT_TRUE(y.empty());
}

}  // namespace
}  // namespace anchorage::core

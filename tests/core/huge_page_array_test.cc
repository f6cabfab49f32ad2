// HugePageArray: every element starts as zero bits, large arrays too (even on memory used before);
// a move hands the elements over and leaves the source empty.
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

TEST(HugePageArray, EveryElementStartsAsZeroBits) {
  for (size_t n : {size_t(1), size_t(1000), size_t(300000)}) {  // 300k x 16 B: huge pages
    {
      HugePageArray<Pair> dirty(n);  // memory a later array may be given again
      std::fill(dirty.begin(), dirty.end(), Pair{~uint64_t{0}, -1, 7});
    }
    HugePageArray<Pair> x(n);
    ASSERT_EQ(x.size(), n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.data()) % 64, 0u);
    EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](const Pair& p) {
      return p.key == 0 && p.a == 0 && p.b == 0;
    })) << n;
    x[n - 1] = Pair{1, 2, 3};
    EXPECT_EQ(x[n - 1].b, 3);
  }
}

TEST(HugePageArray, AMoveHandsTheElementsOver) {
  HugePageArray<int32_t> x(5000);
  x[0] = 3;
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

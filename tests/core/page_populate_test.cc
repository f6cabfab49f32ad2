// populate_for_write: the pages of a range are resident after the call (mincore), its bytes
// unchanged, nothing done below the threshold; reserve_populated and populated_vector give
// vectors whose storage is resident before it is written.
#include "core/page_populate.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace anchorage::core {
namespace {

const size_t kPage = size_t(sysconf(_SC_PAGESIZE));

// The pages holding [p, p + bytes): [begin, end).
std::pair<uintptr_t, uintptr_t> spanned(const void* p, size_t bytes) {
  return {reinterpret_cast<uintptr_t>(p) / kPage * kPage,
          (reinterpret_cast<uintptr_t>(p) + bytes + kPage - 1) / kPage * kPage};
}

// How many of the pages holding [p, p + bytes) are resident.
size_t resident_pages(const void* p, size_t bytes) {
  const auto [begin, end] = spanned(p, bytes);
  std::vector<unsigned char> in((end - begin) / kPage);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
  return size_t(std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; }));
}

struct Mapping {  // fresh anonymous pages: none resident until touched
  explicit Mapping(size_t n) : bytes(n) {
    p = static_cast<uint8_t*>(
        mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(p, MAP_FAILED);
    madvise(p, n, MADV_NOHUGEPAGE);  // so one touch makes one page resident, not 512
  }
  ~Mapping() { munmap(p, bytes); }
  uint8_t* p;
  size_t bytes;
};

bool kernel_populates() {
  Mapping m(64 * kPage);
  return populate_for_write(m.p, m.bytes);
}

TEST(PopulateForWrite, MakesEveryPageOfTheRangeResidentAndKeepsItsBytes) {
  Mapping m(64 * kPage);
  m.p[5 * kPage + 7] = 42;  // one page written before
  ASSERT_EQ(resident_pages(m.p, m.bytes), 1u);
  // A range starting and ending inside pages: the pages holding its bytes, no others.
  uint8_t* from = m.p + 3 * kPage + 100;
  const size_t bytes = 40 * kPage;
  if (!populate_for_write(from, bytes)) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  EXPECT_EQ(resident_pages(from, bytes), 41u);
  EXPECT_EQ(resident_pages(m.p, 3 * kPage), 0u);
  EXPECT_EQ(resident_pages(m.p + 44 * kPage, 20 * kPage), 0u);
  EXPECT_EQ(m.p[5 * kPage + 7], 42);
  EXPECT_EQ(m.p[3 * kPage + 100], 0);
}

TEST(PopulateForWrite, LeavesSmallRangesAndNullAlone) {
  Mapping m(64 * kPage);
  EXPECT_FALSE(populate_for_write(m.p, kPopulateFromBytes - 1));
  EXPECT_EQ(resident_pages(m.p, m.bytes), 0u);
  EXPECT_FALSE(populate_for_write(nullptr, size_t(1) << 30));
}

TEST(PopulateForWrite, VectorsAreResidentBeforeTheyAreWritten) {
  // 40 MiB: above glibc's largest mmap threshold (32 MiB), so fresh pages from the kernel
  // whatever the process freed before.
  std::vector<uint32_t> v;
  reserve_populated(v, size_t(10) << 20);
  ASSERT_GE(v.capacity(), size_t(10) << 20);
  EXPECT_TRUE(v.empty());
  const size_t bytes = v.capacity() * sizeof(uint32_t);
  const auto [begin, end] = spanned(v.data(), bytes);
  if (!kernel_populates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  EXPECT_EQ(resident_pages(v.data(), bytes), (end - begin) / kPage);
  const std::vector<int64_t> z = populated_vector<int64_t>(300000);
  ASSERT_EQ(z.size(), 300000u);
  EXPECT_TRUE(std::all_of(z.begin(), z.end(), [](int64_t x) { return x == 0; }));
}

}  // namespace
}  // namespace anchorage::core

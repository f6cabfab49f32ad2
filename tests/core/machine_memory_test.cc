#include "core/machine_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace anchorage::core {
namespace {

TEST(MachineMemory, CgroupLimitText) {
  EXPECT_EQ(parse_cgroup_limit("max\n"), 0);
  EXPECT_EQ(parse_cgroup_limit("9223372036854771712\n"), 0);  // cgroup v1's "no limit"
  EXPECT_EQ(parse_cgroup_limit("8589934592\n"), int64_t(8) << 30);
  EXPECT_EQ(parse_cgroup_limit("1024"), 1024);
  EXPECT_EQ(parse_cgroup_limit(""), 0);
  EXPECT_EQ(parse_cgroup_limit("12k"), 0);
  EXPECT_EQ(parse_cgroup_limit("-5"), 0);
}

TEST(MachineMemory, NeverMoreThanThePhysicalMemory) {
  const int64_t physical = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  const int64_t bytes = machine_memory_bytes();
  EXPECT_GT(bytes, 0);
  EXPECT_LE(bytes, physical);
}

}  // namespace
}  // namespace anchorage::core

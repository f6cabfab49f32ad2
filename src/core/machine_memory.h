// machine_memory: how much RAM this process may use, for the defaults of the memory budget
// (cache/budget.h). The smaller of the machine's physical memory and the cgroup's limit (a
// container sees the host's MemTotal but is killed at its own limit).
#pragma once

#include <cstdint>
#include <string_view>

namespace anchorage::core {

// Bytes of RAM available to this process; 0 when nothing can be read.
int64_t machine_memory_bytes();

// A cgroup limit file's contents ("max\n", "9223372036854771712\n" or a byte count) as bytes;
// 0 for no limit or text that is not a count.
int64_t parse_cgroup_limit(std::string_view text);

}  // namespace anchorage::core

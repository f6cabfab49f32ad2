#include "core/machine_memory.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace anchorage::core {
namespace {

int64_t cgroup_limit(const char* path) {
  std::ifstream in(path);
  if (!in) return 0;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_cgroup_limit(text);
}

}  // namespace

int64_t parse_cgroup_limit(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int64_t bytes = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || bytes <= 0) return 0;
  // cgroup v1 writes "no limit" as the largest page-aligned int64.
  if (bytes >= (int64_t(1) << 62)) return 0;
  return bytes;
}

int64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  int64_t bytes = pages > 0 && page > 0 ? int64_t(pages) * page : 0;
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const int64_t limit = cgroup_limit(path);
    if (limit > 0) bytes = bytes > 0 ? std::min(bytes, limit) : limit;
  }
  return bytes;
}

}  // namespace anchorage::core

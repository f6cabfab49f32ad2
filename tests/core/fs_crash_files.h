// The files the crash test's child writes (tests/core/fs_crash_child.cc) and the test checks
// (fs_crash_test.cc): names and contents both sides derive from the file's index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anchorage::test {

// Each file goes out in this many appends, so `appended` has several crash points per file.
inline constexpr int kCrashFileParts = 3;

inline std::string crash_file_name(int i) {
  return "file" + std::to_string(i) + ".chunk";
}

// Part p of file i: sizes that straddle 4 KiB blocks, bytes that differ per file and offset.
inline std::vector<std::byte> crash_file_part(int i, int p) {
  const size_t n = 3000 + size_t(i) * 1777 + size_t(p) * 4093;
  std::vector<std::byte> b(n);
  uint32_t x = 0x9e3779b9u * uint32_t(i * kCrashFileParts + p + 1);
  for (auto& c : b) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = std::byte(x & 0xff);
  }
  return b;
}

inline std::vector<std::byte> crash_file_contents(int i) {
  std::vector<std::byte> all;
  for (int p = 0; p < kCrashFileParts; ++p) {
    auto part = crash_file_part(i, p);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

}  // namespace anchorage::test

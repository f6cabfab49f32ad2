// Text in and out of a core::Fs, for the file seam's tests: a string's bytes, and a whole
// file's contents as a string ("<error>" when it cannot be read, so a comparison shows why).
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/fs.h"

namespace anchorage::test {

inline std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

inline std::string read_all(core::Fs& fs, const std::string& path) {
  auto f = fs.open_read(path);
  if (!f) return "<" + f.error().to_string() + ">";
  std::string out((*f)->size(), '\0');
  auto n = (*f)->read_at(0, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  if (!n) return "<" + n.error().to_string() + ">";
  return out;
}

}  // namespace anchorage::test

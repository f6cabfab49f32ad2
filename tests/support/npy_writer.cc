#include "npy_writer.h"

#include <cstdio>

namespace anchorage::test {

namespace {

// Format 1.0: magic, version, u16 header length, a Python dict literal padded with spaces
// and a newline so the data starts on a 64-byte boundary.
core::Status write_raw(const std::string& path, const char* descr, const void* data,
                       size_t elem_bytes, const std::vector<int64_t>& shape) {
  std::string dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    n *= d;
  }
  // "(3, 4)" but "(3,)": a one-element tuple keeps its comma.
  if (shape.size() == 1) dims.resize(dims.size() - 1);
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return core::Status::io_error("cannot create " + path);
  const uint16_t hlen = uint16_t(header.size());
  const unsigned char pre[10] = {0x93,
                                 'N',
                                 'U',
                                 'M',
                                 'P',
                                 'Y',
                                 1,
                                 0,
                                 (unsigned char)(hlen & 0xff),
                                 (unsigned char)(hlen >> 8)};
  bool ok = std::fwrite(pre, 1, 10, f) == 10;
  ok = ok && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  ok = ok && (n == 0 || std::fwrite(data, elem_bytes, size_t(n), f) == size_t(n));
  ok = (std::fclose(f) == 0) && ok;
  return ok ? core::Status::ok() : core::Status::io_error("short write to " + path);
}

}  // namespace

core::Status write_npy(const std::string& path, const float* data,
                       const std::vector<int64_t>& shape) {
  return write_raw(path, "<f4", data, 4, shape);
}
core::Status write_npy(const std::string& path, const double* data,
                       const std::vector<int64_t>& shape) {
  return write_raw(path, "<f8", data, 8, shape);
}
core::Status write_npy(const std::string& path, const int32_t* data,
                       const std::vector<int64_t>& shape) {
  return write_raw(path, "<i4", data, 4, shape);
}

}  // namespace anchorage::test

// GGUF serialization with explicit little-endian helpers.
#include "model/gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/check.h"
#include "model/gguf/gguf_file.h"

namespace anchorage::model::gguf {

namespace {

void put_le(std::string* out, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out->push_back(char(uint8_t(v >> (8 * b))));
}
void put_string(std::string* out, std::string_view s) {
  put_le(out, s.size(), 8);
  out->append(s);
}

void put_array_body(std::string* out, const GgufValue& v) {
  put_le(out, uint32_t(v.elem), 4);
  put_le(out, v.count, 8);
  if (v.elem == GgufType::kString) {
    ANCHORAGE_CHECK(v.strings.size() == v.count);
    for (std::string_view s : v.strings) put_string(out, s);
  } else if (v.elem == GgufType::kArray) {
    ANCHORAGE_CHECK(v.arrays.size() == v.count);
    for (const GgufValue& a : v.arrays) put_array_body(out, a);
  } else {
    ANCHORAGE_CHECK(v.raw.size() == v.count * uint64_t(gguf_scalar_size(v.elem)));
    out->append(reinterpret_cast<const char*>(v.raw.data()), v.raw.size());
  }
}

void put_value(std::string* out, const GgufValue& v) {
  if (v.type == GgufType::kString) return put_string(out, v.str);
  if (v.type == GgufType::kArray) return put_array_body(out, v);
  put_le(out, v.bits, int(gguf_scalar_size(v.type)));
}

}  // namespace

void GgufWriter::add(const std::string& key, GgufValue v) {
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  }
  kv_.emplace_back(key, std::move(v));
}

void GgufWriter::add_tensor(std::string name, std::vector<int64_t> ne, uint32_t ggml_type,
                            std::vector<uint8_t> bytes) {
  tensors_.push_back({std::move(name), std::move(ne), ggml_type, std::move(bytes)});
}

uint64_t GgufWriter::alignment() const {
  for (const auto& kv : kv_) {
    if (kv.first == "general.alignment") return kv.second.bits;
  }
  return kGgufDefaultAlignment;
}

std::string GgufWriter::header() const {
  const uint64_t al = alignment();
  std::string out;
  put_le(&out, kGgufMagic, 4);
  put_le(&out, version_, 4);
  put_le(&out, tensors_.size(), 8);
  put_le(&out, kv_.size(), 8);
  for (const auto& [key, v] : kv_) {
    put_string(&out, key);
    put_le(&out, uint32_t(v.type), 4);
    put_value(&out, v);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(&out, t.name);
    put_le(&out, t.ne.size(), 4);
    for (int64_t d : t.ne) put_le(&out, uint64_t(d), 8);
    put_le(&out, t.ggml_type, 4);
    put_le(&out, offset, 8);
    offset += (t.bytes.size() + al - 1) / al * al;
  }
  out.resize((out.size() + al - 1) / al * al, '\0');
  return out;
}

std::string GgufWriter::serialize() const {
  const uint64_t al = alignment();
  std::string out = header();
  for (const Tensor& t : tensors_) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    out.resize((out.size() + al - 1) / al * al, '\0');
  }
  return out;
}

core::Status GgufWriter::write_file(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return core::Status::io_error(path + ": " + std::strerror(errno));
  const uint64_t al = alignment();
  bool ok = true;
  auto put = [&](const void* p, size_t n) { ok = ok && std::fwrite(p, 1, n, f) == n; };
  const std::string h = header();
  put(h.data(), h.size());
  static const char kZeros[64] = {};
  for (const Tensor& t : tensors_) {
    put(t.bytes.data(), t.bytes.size());
    uint64_t pad = (al - t.bytes.size() % al) % al;
    while (pad > 0) {
      const size_t n = size_t(std::min<uint64_t>(pad, sizeof(kZeros)));
      put(kZeros, n);
      pad -= n;
    }
  }
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return core::Status::io_error(path + ": write failed");
  }
  return core::Status::ok();
}

}  // namespace anchorage::model::gguf

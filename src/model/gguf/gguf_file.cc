// The GGUF parser. Every read is bounds-checked; every count is bounded by the bytes left
// (each element takes at least one byte) before anything is reserved.
#include "model/gguf/gguf_file.h"

#include <cstring>
#include <limits>

#include "core/page_populate.h"
#include "model/gguf/ggml_type.h"

namespace anchorage::model::gguf {

using core::Result;
using core::Status;

namespace {

constexpr int kMaxArrayDepth = 4;
constexpr uint64_t kMaxStringBytes = uint64_t(1) << 30;

class Reader {
 public:
  // owner: what keeps p's bytes alive, shared by the string arrays that view them.
  Reader(const uint8_t* p, size_t n, std::shared_ptr<const void> owner)
      : p_(p), n_(n), owner_(std::move(owner)) {}
  const std::shared_ptr<const void>& owner() const { return owner_; }
  size_t pos() const { return pos_; }
  size_t left() const { return n_ - pos_; }

  Status need(uint64_t bytes, const std::string& what) const {
    if (bytes > left()) {
      return Status::corruption(core::Reason::kShortRead, "gguf: truncated: " + what + " at byte " +
                                                              std::to_string(pos_) + " needs " +
                                                              std::to_string(bytes) + " bytes, " +
                                                              std::to_string(left()) + " left");
    }
    return Status::ok();
  }
  Status u32(uint32_t* v, const std::string& what) { return scalar(v, what); }
  Status u64(uint64_t* v, const std::string& what) { return scalar(v, what); }
  Status bytes(void* out, size_t n, const std::string& what) {
    if (Status s = need(n, what); !s.is_ok()) return s;
    if (n == 0) return Status::ok();  // out may be null (an empty array)
    std::memcpy(out, p_ + pos_, n);
    pos_ += n;
    return Status::ok();
  }
  // A length-prefixed string. The fast path names nothing; only a string that does not fit
  // builds the error that names it (a vocabulary has 300k strings, and naming each for an
  // error that never comes was most of a parse).
  Status string(std::string* s, const std::string& what) {
    if (try_string(s)) return Status::ok();
    uint64_t len = 0;
    if (Status st = u64(&len, what + " length"); !st.is_ok()) return st;
    if (len > kMaxStringBytes) {
      return Status::corruption(
          core::Reason::kLengthRange,
          "gguf: " + what + ": string length " + std::to_string(len) + " is out of range");
    }
    return need(len, what);  // fails: try_string takes every string that fits
  }
  // string() without a name: false, and nothing read, where string() would fail.
  bool try_string(std::string* s) {
    std::string_view v;
    if (!try_string_view(&v)) return false;
    s->assign(v);
    return true;
  }
  // try_string() as a view of the bytes (valid while owner() lives).
  bool try_string_view(std::string_view* s) {
    uint64_t len = 0;
    if (left() < sizeof len) return false;
    std::memcpy(&len, p_ + pos_, sizeof len);
    if (len > kMaxStringBytes || len > left() - sizeof len) return false;
    *s = std::string_view(reinterpret_cast<const char*>(p_ + pos_ + sizeof len), size_t(len));
    pos_ += sizeof len + size_t(len);
    return true;
  }

 private:
  template <typename T>
  Status scalar(T* v, const std::string& what) {
    return bytes(v, sizeof(T), what);  // the host is little-endian, as GGUF is
  }
  const uint8_t* p_;
  size_t n_;
  std::shared_ptr<const void> owner_;
  size_t pos_ = 0;
};

Status read_value(Reader* r, GgufType type, const std::string& what, int depth, GgufValue* v);

Status read_array(Reader* r, const std::string& what, int depth, GgufValue* v) {
  if (depth >= kMaxArrayDepth) {
    return Status::corruption(
        core::Reason::kLengthRange,
        "gguf: " + what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  }
  uint32_t elem = 0;
  if (Status s = r->u32(&elem, what + " element type"); !s.is_ok()) return s;
  if (!gguf_type_known(elem)) {
    return Status::corruption("gguf: " + what + ": unknown array element type " +
                              std::to_string(elem));
  }
  uint64_t count = 0;
  if (Status s = r->u64(&count, what + " element count"); !s.is_ok()) return s;
  v->type = GgufType::kArray;
  v->elem = GgufType(elem);
  v->count = count;
  const int64_t size = gguf_scalar_size(v->elem);
  // Strings take at least their 8-byte length, arrays their 12-byte header.
  const uint64_t min_bytes = size > 0 ? uint64_t(size) : v->elem == GgufType::kString ? 8 : 12;
  if (count > r->left() / min_bytes) {
    return Status::corruption(core::Reason::kShortRead,
                              "gguf: truncated: " + what + " claims " + std::to_string(count) +
                                  " elements, more than the " + std::to_string(r->left()) +
                                  " bytes left can hold");
  }
  if (size > 0) {
    core::reserve_populated(v->raw, size_t(count * uint64_t(size)));
    v->raw.resize(size_t(count * uint64_t(size)));
    return r->bytes(v->raw.data(), v->raw.size(), what);
  }
  if (v->elem == GgufType::kString) {
    core::reserve_populated(v->strings, size_t(count));  // 300k views for a 151k vocabulary
    v->strings.resize(size_t(count));
    v->string_bytes = r->owner();
    for (uint64_t i = 0; i < count; ++i) {
      if (r->try_string_view(&v->strings[size_t(i)])) continue;
      std::string unused;  // try_string_view failed: string() names the element that does not fit
      if (Status s = r->string(&unused, what + "[" + std::to_string(i) + "]"); !s.is_ok()) return s;
    }
    return Status::ok();
  }
  v->arrays.resize(size_t(count));
  for (uint64_t i = 0; i < count; ++i) {
    if (Status s =
            read_array(r, what + "[" + std::to_string(i) + "]", depth + 1, &v->arrays[size_t(i)]);
        !s.is_ok())
      return s;
  }
  return Status::ok();
}

Status read_value(Reader* r, GgufType type, const std::string& what, int depth, GgufValue* v) {
  v->type = type;
  if (type == GgufType::kString) return r->string(&v->str, what);
  if (type == GgufType::kArray) return read_array(r, what, depth, v);
  const int64_t size = gguf_scalar_size(type);
  uint8_t b[8] = {};
  if (Status s = r->bytes(b, size_t(size), what); !s.is_ok()) return s;
  for (int64_t k = 0; k < size; ++k) v->bits |= uint64_t(b[k]) << (8 * k);
  if (type == GgufType::kBool && v->bits > 1) {
    return Status::corruption("gguf: " + what + ": bool value " + std::to_string(v->bits));
  }
  return Status::ok();
}

Status read_tensor_info(Reader* r, uint64_t index, GgufTensorInfo* t) {
  const std::string what = "tensor info " + std::to_string(index);
  if (Status s = r->string(&t->name, what + " name"); !s.is_ok()) return s;
  const std::string named = "tensor '" + t->name + "'";
  uint32_t n_dims = 0;
  if (Status s = r->u32(&n_dims, named + " dimension count"); !s.is_ok()) return s;
  if (n_dims < 1 || n_dims > uint32_t(kGgufMaxDims)) {
    return Status::corruption("gguf: " + named + ": " + std::to_string(n_dims) +
                              " dimensions (1 to 4 allowed)");
  }
  uint64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t ne = 0;
    if (Status s = r->u64(&ne, named + " shape"); !s.is_ok()) return s;
    if (ne == 0 || ne > (uint64_t(1) << 40) || elements > (uint64_t(1) << 52) / ne) {
      return Status::corruption("gguf: " + named + ": dimension " + std::to_string(d) + " = " +
                                std::to_string(ne) + " is zero or overflows the element count");
    }
    elements *= ne;
    t->ne.push_back(int64_t(ne));
  }
  if (Status s = r->u32(&t->ggml_type, named + " type"); !s.is_ok()) return s;
  const auto info = ggml_type_info(t->ggml_type);
  if (!info) {
    return Status::corruption("gguf: " + named + ": unknown ggml type " +
                              std::to_string(t->ggml_type));
  }
  if (t->ne[0] % info->block_elements != 0) {
    return Status::corruption("gguf: " + named + ": row length " + std::to_string(t->ne[0]) +
                              " is not a multiple of the " + info->name + " block of " +
                              std::to_string(info->block_elements));
  }
  t->n_bytes = int64_t(elements) / info->block_elements * info->block_bytes;
  return r->u64(&t->offset, named + " offset");
}

}  // namespace

int64_t GgufTensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

std::string GgufTensorInfo::shape_string() const {
  std::string s = "{";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

Result<GgufFile> GgufFile::parse(std::shared_ptr<const MappedFile> file) {
  GgufFile g;
  g.file_ = std::move(file);
  Reader r(g.file_->data(), g.file_->size(), g.file_);
  uint32_t magic = 0;
  if (Status s = r.u32(&magic, "magic"); !s.is_ok()) return s;
  if (magic != kGgufMagic)
    return Status::corruption(core::Reason::kBadMagic, "gguf: bad magic (not a GGUF file)");
  if (Status s = r.u32(&g.version_, "version"); !s.is_ok()) return s;
  if (g.version_ != 2 && g.version_ != 3) {
    return Status::unsupported(
        core::Reason::kBadVersion,
        "gguf: version " + std::to_string(g.version_) + " (2 and 3 are supported)");
  }
  uint64_t n_tensors = 0, n_kv = 0;
  if (Status s = r.u64(&n_tensors, "tensor count"); !s.is_ok()) return s;
  if (Status s = r.u64(&n_kv, "metadata count"); !s.is_ok()) return s;
  // A key-value pair takes at least 12 bytes (key length, value type), a tensor info 24.
  if (n_kv > r.left() / 12) {
    return Status::corruption(core::Reason::kShortRead, "gguf: truncated: metadata count " +
                                                            std::to_string(n_kv) +
                                                            " exceeds what the file can hold");
  }
  if (n_tensors > r.left() / 24) {
    return Status::corruption(core::Reason::kShortRead, "gguf: truncated: tensor count " +
                                                            std::to_string(n_tensors) +
                                                            " exceeds what the file can hold");
  }
  g.kv_.reserve(size_t(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    if (Status s = r.string(&key, "metadata key " + std::to_string(i)); !s.is_ok()) return s;
    uint32_t type = 0;
    if (Status s = r.u32(&type, "type of key '" + key + "'"); !s.is_ok()) return s;
    if (!gguf_type_known(type)) {
      return Status::corruption("gguf: key '" + key + "': unknown value type " +
                                std::to_string(type));
    }
    GgufValue v;
    if (Status s = read_value(&r, GgufType(type), "key '" + key + "'", 0, &v); !s.is_ok()) return s;
    if (!g.kv_index_.emplace(key, g.kv_.size()).second) {
      return Status::corruption("gguf: key '" + key + "' appears twice");
    }
    g.kv_.emplace_back(std::move(key), std::move(v));
  }
  if (const GgufValue* a = g.find("general.alignment")) {
    const auto al = a->as_int();
    if (a->type != GgufType::kU32 || !al || *al == 0 || (*al & (*al - 1)) != 0) {
      return Status::corruption("gguf: general.alignment must be a u32 power of two");
    }
    g.alignment_ = uint32_t(*al);
  }
  g.tensors_.resize(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo& t = g.tensors_[size_t(i)];
    if (Status s = read_tensor_info(&r, i, &t); !s.is_ok()) return s;
    if (!g.tensor_index_.emplace(t.name, size_t(i)).second) {
      return Status::corruption("gguf: tensor '" + t.name + "' appears twice");
    }
  }
  const uint64_t al = g.alignment_;
  g.data_offset_ = (uint64_t(r.pos()) + al - 1) / al * al;
  const uint64_t size = g.file_->size();
  if (n_tensors > 0 && g.data_offset_ > size) {
    return Status::corruption(core::Reason::kShortRead,
                              "gguf: truncated: the data section would start at byte " +
                                  std::to_string(g.data_offset_) + ", past the end (" +
                                  std::to_string(size) + " bytes)");
  }
  const uint64_t data_size = n_tensors > 0 ? size - g.data_offset_ : 0;
  for (GgufTensorInfo& t : g.tensors_) {
    if (t.offset % al != 0) {
      return Status::corruption("gguf: tensor '" + t.name + "': offset " +
                                std::to_string(t.offset) + " is not a multiple of the alignment " +
                                std::to_string(al));
    }
    if (t.offset > data_size || uint64_t(t.n_bytes) > data_size - t.offset) {
      return Status::corruption(core::Reason::kShortRead,
                                "gguf: tensor '" + t.name + "' (" + std::to_string(t.n_bytes) +
                                    " bytes at data offset " + std::to_string(t.offset) +
                                    ") extends past the end of the file");
    }
    t.data = g.file_->data() + g.data_offset_ + t.offset;
  }
  return g;
}

Result<GgufFile> GgufFile::open(const std::string& path) {
  auto f = MappedFile::open(path);
  if (!f) return f.error();
  auto g = parse(std::move(f.value()));
  if (!g) return g.error().with_prefix(path + ": ");
  return g;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensorInfo* GgufFile::tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::string> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return Status::not_found("gguf: missing key '" + std::string(key) + "'");
  if (v->type != GgufType::kString) {
    return Status::corruption("gguf: key '" + std::string(key) + "' is not a string");
  }
  return v->str;
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return Status::not_found("gguf: missing key '" + std::string(key) + "'");
  const auto i = v->as_int();
  if (!i) return Status::corruption("gguf: key '" + std::string(key) + "' is not an integer");
  return *i;
}

Result<double> GgufFile::get_double(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return Status::not_found("gguf: missing key '" + std::string(key) + "'");
  const auto d = v->as_double();
  if (!d) return Status::corruption("gguf: key '" + std::string(key) + "' is not a number");
  return *d;
}

Result<int64_t> GgufFile::get_int_or(std::string_view key, int64_t fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_int(key);
}

Result<double> GgufFile::get_double_or(std::string_view key, double fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_double(key);
}

}  // namespace anchorage::model::gguf

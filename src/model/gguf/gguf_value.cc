// GgufValue builders and readers.
#include "model/gguf/gguf_value.h"

#include <cstring>
#include <limits>

#include "core/check.h"
#include "core/page_populate.h"

namespace anchorage::model::gguf {

int64_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    default:
      return 0;
  }
}

bool gguf_type_known(uint32_t id) {
  return id <= uint32_t(GgufType::kF64);
}

std::string_view gguf_type_name(GgufType t) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                                "i32", "f32", "bool", "string", "array",
                                                "u64", "i64", "f64"};
  const uint32_t i = uint32_t(t);
  return i < 13 ? kNames[i] : std::string_view("?");
}

GgufValue GgufValue::scalar(GgufType t, uint64_t bits) {
  GgufValue v;
  v.type = t;
  v.bits = bits;
  return v;
}

GgufValue GgufValue::f32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return scalar(GgufType::kF32, u);
}

GgufValue GgufValue::f64(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return scalar(GgufType::kF64, u);
}

GgufValue GgufValue::string(std::string s) {
  GgufValue v;
  v.type = GgufType::kString;
  v.str = std::move(s);
  return v;
}

GgufValue GgufValue::string_array(std::vector<std::string> s) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.elem = GgufType::kString;
  v.count = s.size();
  auto owned = std::make_shared<const std::vector<std::string>>(std::move(s));
  v.strings.assign(owned->begin(), owned->end());
  v.string_bytes = std::move(owned);
  return v;
}

namespace {

void append_le(std::vector<uint8_t>* out, uint64_t bits, int64_t size) {
  for (int64_t b = 0; b < size; ++b) out->push_back(uint8_t(bits >> (8 * b)));
}

}  // namespace

GgufValue GgufValue::int_array(GgufType elem, const std::vector<int64_t>& x) {
  const int64_t size = gguf_scalar_size(elem);
  ANCHORAGE_CHECK(size > 0 && elem != GgufType::kF32 && elem != GgufType::kF64);
  GgufValue v;
  v.type = GgufType::kArray;
  v.elem = elem;
  v.count = x.size();
  for (int64_t e : x) append_le(&v.raw, uint64_t(e), size);
  return v;
}

GgufValue GgufValue::float_array(GgufType elem, const std::vector<double>& x) {
  ANCHORAGE_CHECK(elem == GgufType::kF32 || elem == GgufType::kF64);
  GgufValue v;
  v.type = GgufType::kArray;
  v.elem = elem;
  v.count = x.size();
  for (double e : x) {
    const GgufValue s = elem == GgufType::kF32 ? f32(float(e)) : f64(e);
    append_le(&v.raw, s.bits, gguf_scalar_size(elem));
  }
  return v;
}

GgufValue GgufValue::array_of_arrays(std::vector<GgufValue> a) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.elem = GgufType::kArray;
  v.count = a.size();
  v.arrays = std::move(a);
  return v;
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kU16:
    case GgufType::kI16:
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kU64:
    case GgufType::kI64:
      return true;
    default:
      return false;
  }
}

namespace {

// The value of an integer scalar of type t from its zero-extended bytes (bool too, as 0 or 1,
// when with_bool), or nullopt: as_int() and as_int_array() alike.
std::optional<int64_t> int_of(GgufType t, uint64_t bits, bool with_bool) {
  switch (t) {
    case GgufType::kBool:
      if (!with_bool) return std::nullopt;
      return int64_t(bits);
    case GgufType::kU8:
    case GgufType::kU16:
    case GgufType::kU32:
      return int64_t(bits);
    case GgufType::kU64:
      if (bits > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return int64_t(bits);
    case GgufType::kI8:
      return int64_t(int8_t(uint8_t(bits)));
    case GgufType::kI16:
      return int64_t(int16_t(uint16_t(bits)));
    case GgufType::kI32:
      return int64_t(int32_t(uint32_t(bits)));
    case GgufType::kI64:
      return int64_t(bits);
    default:
      return std::nullopt;
  }
}

// Element i's bytes of a scalar array, zero-extended (the host is little-endian, as GGUF).
uint64_t element_bits(const GgufValue& v, uint64_t i) {
  const size_t size = size_t(gguf_scalar_size(v.elem));
  uint64_t b = 0;
  std::memcpy(&b, v.raw.data() + size_t(i) * size, size);
  return b;
}

}  // namespace

std::optional<int64_t> GgufValue::as_int() const {
  return int_of(type, bits, false);
}

std::optional<double> GgufValue::as_double() const {
  if (type == GgufType::kF32) {
    float f;
    const uint32_t u = uint32_t(bits);
    std::memcpy(&f, &u, 4);
    return double(f);
  }
  if (type == GgufType::kF64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (auto i = as_int()) return double(*i);
  return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
  if (type != GgufType::kBool) return std::nullopt;
  return bits != 0;
}

GgufValue GgufValue::element(uint64_t i) const {
  ANCHORAGE_CHECK(type == GgufType::kArray && gguf_scalar_size(elem) > 0 && i < count);
  return scalar(elem, element_bits(*this, i));
}

namespace {

// Every element of v's array, whose elements are kSize bytes, as int64 into out (element(i)'s
// bits, without a GgufValue each and with a load of a known size: a 151k-entry token_type
// array is read at a server's start); false at the first that is not an integer.
template <size_t kSize>
bool ints_of(const GgufValue& v, std::vector<int64_t>* out) {
  const uint8_t* p = v.raw.data();
  for (uint64_t i = 0; i < v.count; ++i, p += kSize) {
    uint64_t bits = 0;
    std::memcpy(&bits, p, kSize);
    const std::optional<int64_t> x = int_of(v.elem, bits, true);
    if (!x) return false;
    out->push_back(*x);
  }
  return true;
}

}  // namespace

std::optional<std::vector<int64_t>> GgufValue::as_int_array() const {
  if (type != GgufType::kArray || gguf_scalar_size(elem) == 0) return std::nullopt;
  std::vector<int64_t> out;
  core::reserve_populated(out, size_t(count));
  bool ok = false;
  switch (gguf_scalar_size(elem)) {
    case 1:
      ok = ints_of<1>(*this, &out);
      break;
    case 2:
      ok = ints_of<2>(*this, &out);
      break;
    case 4:
      ok = ints_of<4>(*this, &out);
      break;
    case 8:
      ok = ints_of<8>(*this, &out);
      break;
  }
  if (!ok) return std::nullopt;
  return out;
}

bool operator==(const GgufValue& a, const GgufValue& b) {
  return a.type == b.type && a.bits == b.bits && a.str == b.str && a.elem == b.elem &&
         a.count == b.count && a.raw == b.raw && a.strings == b.strings && a.arrays == b.arrays;
}

}  // namespace anchorage::model::gguf

// GgufValue: one metadata value of a GGUF file — a scalar of one of the twelve value types, a
// string, or an array (of scalars, of strings, or of arrays). Numeric arrays keep the file's
// little-endian bytes and are read by index. A value type; no threading concerns.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anchorage::model::gguf {

// The GGUF value type ids (docs/gguf.md).
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Bytes of one scalar of type t; 0 for kString and kArray (variable) or an unknown id.
int64_t gguf_scalar_size(GgufType t);
bool gguf_type_known(uint32_t id);
std::string_view gguf_type_name(GgufType t);

struct GgufValue {
  GgufType type = GgufType::kU8;
  uint64_t bits = 0;  // a scalar's bytes, zero-extended (bool: 0 or 1)
  std::string str;    // kString

  // kArray: elem is the element type, count the element count; elements live in exactly one
  // of the three vectors below, by elem.
  GgufType elem = GgufType::kU8;
  uint64_t count = 0;
  std::vector<uint8_t> raw;  // scalar elements, count * gguf_scalar_size(elem) bytes
  // String elements, as views: of the mapped file for a parsed value (a vocabulary's 300k
  // strings copied out were most of a parse: docs/performance.md "Start-up"), of the strings a
  // builder was given otherwise. string_bytes keeps the viewed bytes alive, copies share it.
  std::vector<std::string_view> strings;
  std::shared_ptr<const void> string_bytes;
  std::vector<GgufValue> arrays;  // array elements

  // Builders.
  static GgufValue u8(uint8_t v) { return scalar(GgufType::kU8, v); }
  static GgufValue i8(int8_t v) { return scalar(GgufType::kI8, uint64_t(uint8_t(v))); }
  static GgufValue u16(uint16_t v) { return scalar(GgufType::kU16, v); }
  static GgufValue i16(int16_t v) { return scalar(GgufType::kI16, uint64_t(uint16_t(v))); }
  static GgufValue u32(uint32_t v) { return scalar(GgufType::kU32, v); }
  static GgufValue i32(int32_t v) { return scalar(GgufType::kI32, uint64_t(uint32_t(v))); }
  static GgufValue u64(uint64_t v) { return scalar(GgufType::kU64, v); }
  static GgufValue i64(int64_t v) { return scalar(GgufType::kI64, uint64_t(v)); }
  static GgufValue f32(float v);
  static GgufValue f64(double v);
  static GgufValue boolean(bool v) { return scalar(GgufType::kBool, v ? 1 : 0); }
  static GgufValue string(std::string s);
  static GgufValue string_array(std::vector<std::string> v);
  // Any scalar element type; values given as int64 / double are stored as that type.
  static GgufValue int_array(GgufType elem, const std::vector<int64_t>& v);
  static GgufValue float_array(GgufType elem, const std::vector<double>& v);
  static GgufValue array_of_arrays(std::vector<GgufValue> v);
  static GgufValue scalar(GgufType t, uint64_t bits);

  bool is_integer() const;  // one of the eight integer types (not bool)
  bool is_float() const { return type == GgufType::kF32 || type == GgufType::kF64; }
  // The value of an integer scalar (nullopt for any other type, or a u64 above INT64_MAX).
  std::optional<int64_t> as_int() const;
  // An integer or float scalar as double.
  std::optional<double> as_double() const;
  std::optional<bool> as_bool() const;

  // Element i of a scalar array as a scalar GgufValue (i < count, elem a scalar type).
  GgufValue element(uint64_t i) const;
  // Every element of an integer (or bool) array, or nullopt for any other value.
  std::optional<std::vector<int64_t>> as_int_array() const;
};

bool operator==(const GgufValue& a, const GgufValue& b);

}  // namespace anchorage::model::gguf

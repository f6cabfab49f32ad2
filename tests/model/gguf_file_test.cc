// GgufFile / GgufWriter: every metadata type survives a write and a parse; tensor infos,
// alignment and data pointers are right; and every kind of bad file is an error that names
// what is wrong (never a crash or an allocation sized by a corrupt count).
#include "model/gguf/gguf_file.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "model/gguf/ggml_type.h"
#include "model/gguf/gguf_writer.h"

namespace anchorage::model::gguf {
namespace {

core::Result<GgufFile> parse(std::string bytes) {
  return GgufFile::parse(MappedFile::from_bytes(std::move(bytes)));
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& x) {
  std::vector<uint8_t> b(x.size() * 4);
  std::memcpy(b.data(), x.data(), b.size());
  return b;
}

// One value of every type, scalars and arrays.
std::vector<std::pair<std::string, GgufValue>> every_type() {
  std::vector<std::pair<std::string, GgufValue>> kv = {
      {"t.u8", GgufValue::u8(250)},
      {"t.i8", GgufValue::i8(-7)},
      {"t.u16", GgufValue::u16(65000)},
      {"t.i16", GgufValue::i16(-32000)},
      {"t.u32", GgufValue::u32(4000000000u)},
      {"t.i32", GgufValue::i32(-2000000000)},
      {"t.f32", GgufValue::f32(1e-6f)},
      {"t.bool", GgufValue::boolean(true)},
      {"t.string", GgufValue::string("héllo\n<|im_start|>")},
      {"t.u64", GgufValue::u64(18000000000000000000ull)},
      {"t.i64", GgufValue::i64(-9000000000000000000ll)},
      {"t.f64", GgufValue::f64(3.141592653589793)},
      {"t.empty_string", GgufValue::string("")},
      {"a.strings", GgufValue::string_array({"a", "", "Ġhello", "[PAD7]"})},
      {"a.empty", GgufValue::int_array(GgufType::kI32, {})},
      {"a.bool", GgufValue::int_array(GgufType::kBool, {1, 0, 1})},
      {"a.f32", GgufValue::float_array(GgufType::kF32, {0.5, -2.0})},
      {"a.f64", GgufValue::float_array(GgufType::kF64, {1e300})},
      {"a.nested", GgufValue::array_of_arrays({GgufValue::int_array(GgufType::kU8, {1, 2}),
                                               GgufValue::string_array({"x"})})},
  };
  for (GgufType t : {GgufType::kU8, GgufType::kI8, GgufType::kU16, GgufType::kI16, GgufType::kU32,
                     GgufType::kI32, GgufType::kU64, GgufType::kI64}) {
    kv.emplace_back("a.int." + std::string(gguf_type_name(t)),
                    GgufValue::int_array(t, {0, 1, 100, t == GgufType::kU8 ? 255 : 127}));
  }
  return kv;
}

TEST(GgufFileTest, EveryMetadataTypeRoundTrips) {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter w(version);
    const auto kv = every_type();
    for (const auto& [k, v] : kv) w.add(k, v);
    auto f = parse(w.serialize());
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    EXPECT_EQ(f->version(), version);
    ASSERT_EQ(f->metadata().size(), kv.size());
    for (size_t i = 0; i < kv.size(); ++i) {
      EXPECT_EQ(f->metadata()[i].first, kv[i].first);
      EXPECT_TRUE(f->metadata()[i].second == kv[i].second) << kv[i].first;
    }
    EXPECT_EQ(*f->find("t.i8")->as_int(), -7);
    EXPECT_EQ(*f->find("t.i64")->as_int(), -9000000000000000000ll);
    EXPECT_FALSE(f->find("t.u64")->as_int().has_value());  // above INT64_MAX
    EXPECT_EQ(float(*f->get_double("t.f32")), 1e-6f);
    EXPECT_EQ(*f->get_string("t.string"), "héllo\n<|im_start|>");
    EXPECT_EQ(f->find("a.strings")->strings[2], "Ġhello");
    EXPECT_EQ(*f->find("a.int.i16")->as_int_array(), (std::vector<int64_t>{0, 1, 100, 127}));
    EXPECT_EQ(*f->find("a.bool")->as_int_array(), (std::vector<int64_t>{1, 0, 1}));
    EXPECT_EQ(f->find("a.nested")->arrays[1].strings[0], "x");
    EXPECT_FALSE(f->find("a.f32")->as_int_array().has_value());
    EXPECT_EQ(*f->find("a.empty")->as_int_array(), std::vector<int64_t>{});
  }
  // Every integer width's elements as the scalar of that type reads: signed ones sign-extended,
  // a u64 above INT64_MAX refused.
  const std::vector<int64_t> signed_values = {-1, -128, 127, 0};
  for (GgufType t : {GgufType::kI8, GgufType::kI16, GgufType::kI32, GgufType::kI64}) {
    const GgufValue a = GgufValue::int_array(t, signed_values);
    EXPECT_EQ(*a.as_int_array(), signed_values) << gguf_type_name(t);
    for (uint64_t i = 0; i < a.count; ++i)
      EXPECT_EQ(*a.element(i).as_int(), signed_values[size_t(i)]) << gguf_type_name(t);
  }
  EXPECT_EQ(*GgufValue::int_array(GgufType::kU32, {4000000000ll}).as_int_array(),
            std::vector<int64_t>{4000000000ll});
  GgufValue big = GgufValue::int_array(GgufType::kU64, {1});
  for (size_t k = 0; k < 8; ++k) big.raw[k] = 0xff;  // 2^64 - 1
  EXPECT_FALSE(big.as_int_array().has_value());
}

// A parsed string array views the file's bytes (no copy of a vocabulary's 300k strings), and a
// copy of the value keeps them alive after the file is gone.
TEST(GgufFileTest, StringArraysViewTheFileAndKeepItAlive) {
  GgufWriter w(3);
  w.add("a.strings", GgufValue::string_array({"a", "", "Ġhello", "[PAD7]"}));
  std::optional<GgufValue> copy;
  {
    auto f = parse(w.serialize());
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    const GgufValue* v = f->find("a.strings");
    const char* begin = reinterpret_cast<const char*>(f->file().data());
    for (std::string_view s : v->strings) {
      EXPECT_GE(s.data(), begin);
      EXPECT_LE(s.data() + s.size(), begin + f->file().size());
    }
    copy = *v;
  }
  ASSERT_EQ(copy->strings.size(), 4u);
  EXPECT_EQ(copy->strings[2], "Ġhello");
  EXPECT_EQ(copy->strings[3], "[PAD7]");
  EXPECT_TRUE(*copy == GgufValue::string_array({"a", "", "Ġhello", "[PAD7]"}));
}

TEST(GgufFileTest, TypedGettersNameTheKey) {
  GgufWriter w;
  w.add("k.string", GgufValue::string("x"));
  auto f = parse(w.serialize());
  ASSERT_TRUE(f.has_value());
  auto missing = f->get_int("k.absent");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), core::StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find("k.absent"), std::string::npos);
  auto wrong = f->get_int("k.string");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("k.string"), std::string::npos);
  EXPECT_EQ(*f->get_int_or("k.absent", 4), 4);
}

TEST(GgufFileTest, TensorsAreAlignedAndPointAtTheirBytes) {
  for (uint32_t alignment : {32u, 64u, 1u}) {
    GgufWriter w;
    if (alignment != 32) w.add("general.alignment", GgufValue::u32(alignment));
    w.add_tensor("a", {3}, kGgmlF32, f32_bytes({1, 2, 3}));
    w.add_tensor("b.weight", {2, 2, 1}, kGgmlF32, f32_bytes({4, 5, 6, 7}));
    std::vector<uint8_t> q(34, 0x11);
    w.add_tensor("q", {32}, kGgmlQ8_0, q);
    const std::string bytes = w.serialize();
    auto f = parse(bytes);
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->data_offset() % alignment, 0u);
    ASSERT_EQ(f->tensors().size(), 3u);
    const GgufTensorInfo* b = f->tensor("b.weight");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->ne, (std::vector<int64_t>{2, 2, 1}));
    EXPECT_EQ(b->n_bytes, 16);
    EXPECT_EQ(b->offset % alignment, 0u);
    float x[4];
    std::memcpy(x, b->data, 16);
    EXPECT_EQ(x[3], 7.0f);
    EXPECT_EQ(f->tensor("q")->n_bytes, 34);
    EXPECT_EQ(f->tensor("q")->data[33], 0x11);
    EXPECT_EQ(f->tensor("nope"), nullptr);
  }
}

// A minimal valid file with one F32 tensor of 4 elements; pieces can be replaced.
struct Builder {
  uint32_t magic = kGgufMagic;
  uint32_t version = 3;
  uint64_t n_kv = 1;
  uint64_t n_tensors = 1;
  std::string kv_key = "general.alignment";
  uint32_t kv_type = 4;  // u32
  uint32_t alignment = 32;
  uint32_t n_dims = 1;
  std::vector<uint64_t> ne = {4};
  uint32_t type = 0;
  uint64_t offset = 0;
  size_t data_bytes = 16;

  static void put(std::string* s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s->push_back(char(uint8_t(v >> (8 * i))));
  }
  std::string bytes() const {
    std::string s;
    put(&s, magic, 4);
    put(&s, version, 4);
    put(&s, n_tensors, 8);
    put(&s, n_kv, 8);
    put(&s, kv_key.size(), 8);
    s += kv_key;
    put(&s, kv_type, 4);
    put(&s, alignment, 4);
    put(&s, 6, 8);
    s += "tensor";
    put(&s, n_dims, 4);
    for (uint64_t d : ne) put(&s, d, 8);
    put(&s, type, 4);
    put(&s, offset, 8);
    s.resize((s.size() + 31) / 32 * 32, '\0');
    s.append(data_bytes, '\0');
    return s;
  }
};

void expect_error(const std::string& bytes, core::StatusCode code, const std::string& needle) {
  auto f = parse(bytes);
  ASSERT_FALSE(f.has_value()) << "accepted a bad file; expected: " << needle;
  EXPECT_EQ(f.error().code(), code) << f.error().to_string();
  EXPECT_NE(f.error().message().find(needle), std::string::npos)
      << "'" << f.error().message() << "' does not name '" << needle << "'";
}

TEST(GgufFileTest, TheBuilderMakesAValidFile) {
  auto f = parse(Builder().bytes());
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  EXPECT_EQ(f->tensor("tensor")->n_bytes, 16);
}

TEST(GgufFileTest, EveryTruncationIsAnError) {
  GgufWriter w;
  for (const auto& [k, v] : every_type()) w.add(k, v);
  w.add_tensor("a", {8}, kGgmlF32, f32_bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  w.add_tensor("b", {32}, kGgmlQ8_0, std::vector<uint8_t>(34, 1));
  const std::string full = w.serialize();
  auto whole = parse(full);
  ASSERT_TRUE(whole.has_value());
  // The last tensor's last byte; the alignment padding after it may be cut.
  const GgufTensorInfo* last = whole->tensor("b");
  const size_t end = size_t(whole->data_offset() + last->offset) + size_t(last->n_bytes);
  for (size_t n = 0; n < end; ++n) {
    auto f = parse(full.substr(0, n));
    ASSERT_FALSE(f.has_value()) << "a file cut at byte " << n << " of " << full.size()
                                << " was accepted";
    EXPECT_EQ(f.error().code(), core::StatusCode::kCorruption);
    const std::string& m = f.error().message();
    EXPECT_TRUE(m.find("truncated") != std::string::npos ||
                m.find("past the end") != std::string::npos)
        << "cut at " << n << ": " << m;
  }
}

TEST(GgufFileTest, BadMagicAndVersion) {
  Builder b;
  b.magic = 0x46554746;
  expect_error(b.bytes(), core::StatusCode::kCorruption, "bad magic");
  for (uint32_t v : {1u, 4u, 0xffffffffu}) {
    Builder bv;
    bv.version = v;
    expect_error(bv.bytes(), core::StatusCode::kUnsupported, "version " + std::to_string(v));
  }
}

TEST(GgufFileTest, TensorPastTheEnd) {
  Builder b;
  b.data_bytes = 12;  // 16 needed
  expect_error(b.bytes(), core::StatusCode::kCorruption, "'tensor'");
  expect_error(b.bytes(), core::StatusCode::kCorruption, "past the end");
  Builder far;
  far.offset = uint64_t(1) << 62;  // an offset that would overflow a naive sum
  expect_error(far.bytes(), core::StatusCode::kCorruption, "past the end");
}

TEST(GgufFileTest, UnknownTypesAreNamed) {
  Builder b;
  b.type = 77;
  expect_error(b.bytes(), core::StatusCode::kCorruption, "unknown ggml type 77");
  Builder kv;
  kv.kv_type = 13;
  expect_error(kv.bytes(), core::StatusCode::kCorruption, "unknown value type 13");
}

TEST(GgufFileTest, MisalignedOffsetAndBadAlignment) {
  Builder b;
  b.offset = 4;
  b.data_bytes = 64;
  expect_error(b.bytes(), core::StatusCode::kCorruption, "not a multiple of the alignment");
  Builder al;
  al.alignment = 24;
  expect_error(al.bytes(), core::StatusCode::kCorruption, "general.alignment");
}

TEST(GgufFileTest, CountsAndShapesThatCannotFitAreRejected) {
  Builder kv;
  kv.n_kv = uint64_t(1) << 60;
  expect_error(kv.bytes(), core::StatusCode::kCorruption, "metadata count");
  Builder t;
  t.n_tensors = uint64_t(1) << 60;
  expect_error(t.bytes(), core::StatusCode::kCorruption, "tensor count");
  Builder dims;
  dims.n_dims = 5;
  dims.ne = {1, 1, 1, 1, 1};
  expect_error(dims.bytes(), core::StatusCode::kCorruption, "5 dimensions");
  Builder big;
  big.n_dims = 2;
  big.ne = {uint64_t(1) << 40, uint64_t(1) << 40};
  expect_error(big.bytes(), core::StatusCode::kCorruption, "overflows");
  Builder zero;
  zero.ne = {0};
  expect_error(zero.bytes(), core::StatusCode::kCorruption, "zero");
  Builder block;
  block.type = kGgmlQ8_0;
  block.ne = {33};
  expect_error(block.bytes(), core::StatusCode::kCorruption, "not a multiple of the Q8_0 block");
  // An array whose count claims more elements than the file holds.
  std::string s;
  Builder::put(&s, kGgufMagic, 4);
  Builder::put(&s, 3, 4);
  Builder::put(&s, 0, 8);
  Builder::put(&s, 1, 8);
  Builder::put(&s, 1, 8);
  s += "k";
  Builder::put(&s, 9, 4);  // array
  Builder::put(&s, 8, 4);  // of strings
  Builder::put(&s, uint64_t(1) << 61, 8);
  expect_error(s, core::StatusCode::kCorruption, "claims");
  // A string whose length is past the end.
  std::string str;
  Builder::put(&str, kGgufMagic, 4);
  Builder::put(&str, 3, 4);
  Builder::put(&str, 0, 8);
  Builder::put(&str, 1, 8);
  Builder::put(&str, uint64_t(1) << 40, 8);
  str.append(32, '\0');
  expect_error(str, core::StatusCode::kCorruption, "metadata key 0");
}

TEST(GgufFileTest, DuplicatesAreRejected) {
  GgufWriter w;
  w.add_tensor("x", {1}, kGgmlF32, f32_bytes({1}));
  w.add_tensor("x", {1}, kGgmlF32, f32_bytes({2}));
  expect_error(w.serialize(), core::StatusCode::kCorruption, "'x' appears twice");
}

TEST(GgufFileTest, TypeTable) {
  EXPECT_EQ(ggml_type_label(12), "Q4_K (12)");
  EXPECT_EQ(ggml_type_label(2), "Q4_0 (2)");
  EXPECT_EQ(ggml_type_label(77), "unknown type 77");
  EXPECT_FALSE(dtype_of_ggml(16).has_value());  // IQ2_XXS: known, not read
  EXPECT_FALSE(dtype_of_ggml(9).has_value());   // Q8_1
  EXPECT_EQ(*dtype_of_ggml(13), core::DType::kQ5_K);
  for (int i = 0; i < core::kDTypeCount; ++i) {
    const core::DType t = core::DType(i);
    const uint32_t id = ggml_of_dtype(t);
    EXPECT_EQ(*dtype_of_ggml(id), t);
    std::string lower = ggml_type_info(id)->name;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower, core::dtype_name(t));
    EXPECT_EQ(ggml_type_info(id)->block_bytes, core::dtype_block_bytes(t));
    EXPECT_EQ(ggml_type_info(id)->block_elements, core::dtype_block_elements(t));
  }
}

TEST(GgufFileTest, OpenNamesAMissingPath) {
  auto f = GgufFile::open("/nonexistent/model.gguf");
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().code(), core::StatusCode::kNotFound);
  EXPECT_NE(f.error().message().find("/nonexistent/model.gguf"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::model::gguf

// The ggml type table (ggml's ids, names and block sizes).
#include "model/gguf/ggml_type.h"

#include <array>
#include <utility>

namespace anchorage::model::gguf {

namespace {

struct Entry {
  uint32_t id;
  GgmlTypeInfo info;
};

// ids 4, 5 (Q4_2, Q4_3) and 31-33, 36-38 were removed from ggml and never appear in files.
constexpr std::array<Entry, 32> kTypes = {{
    {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},
    {3, {"Q4_1", 32, 20}},      {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 36}},      {10, {"Q2_K", 256, 84}},
    {11, {"Q3_K", 256, 110}},   {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},   {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}},
    {17, {"IQ2_XS", 256, 74}},  {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},
    {20, {"IQ4_NL", 32, 18}},   {21, {"IQ3_S", 256, 110}},  {22, {"IQ2_S", 256, 82}},
    {23, {"IQ4_XS", 256, 136}}, {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},
    {29, {"IQ1_M", 256, 56}},   {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},
    {35, {"TQ2_0", 256, 66}},   {39, {"MXFP4", 32, 17}},
}};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id) {
  for (const Entry& e : kTypes) {
    if (e.id == id) return e.info;
  }
  return std::nullopt;
}

std::string ggml_type_label(uint32_t id) {
  if (auto info = ggml_type_info(id))
    return std::string(info->name) + " (" + std::to_string(id) + ")";
  return "unknown type " + std::to_string(id);
}

namespace {

// Every DType and its ggml id, the one table both directions read.
constexpr std::array<std::pair<core::DType, uint32_t>, core::kDTypeCount> kReadable = {{
    {core::DType::kF32, kGgmlF32},
    {core::DType::kF16, kGgmlF16},
    {core::DType::kBF16, kGgmlBF16},
    {core::DType::kQ8_0, kGgmlQ8_0},
    {core::DType::kQ4_K, kGgmlQ4_K},
    {core::DType::kQ6_K, kGgmlQ6_K},
    {core::DType::kQ4_0, kGgmlQ4_0},
    {core::DType::kQ4_1, kGgmlQ4_1},
    {core::DType::kQ5_0, kGgmlQ5_0},
    {core::DType::kQ5_1, kGgmlQ5_1},
    {core::DType::kQ5_K, kGgmlQ5_K},
    {core::DType::kQ3_K, kGgmlQ3_K},
    {core::DType::kQ2_K, kGgmlQ2_K},
    {core::DType::kIQ4_NL, kGgmlIQ4_NL},
    {core::DType::kIQ4_XS, kGgmlIQ4_XS},
}};

}  // namespace

std::optional<core::DType> dtype_of_ggml(uint32_t id) {
  for (const auto& [t, g] : kReadable) {
    if (g == id) return t;
  }
  return std::nullopt;
}

uint32_t ggml_of_dtype(core::DType t) {
  for (const auto& [d, g] : kReadable) {
    if (d == t) return g;
  }
  return kGgmlF32;
}

}  // namespace anchorage::model::gguf

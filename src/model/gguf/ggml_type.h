// GgmlType: the tensor element types a GGUF file can name (ggml's type ids), their block sizes,
// and which of them anchorage reads (-> core::DType). docs/gguf.md lists them.
// Plain functions over constants; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"

namespace anchorage::model::gguf {

// ggml's ids for the types anchorage reads or writes; other known ids only have a table entry.
enum GgmlTypeId : uint32_t {
  kGgmlF32 = 0,
  kGgmlF16 = 1,
  kGgmlQ4_0 = 2,
  kGgmlQ4_1 = 3,
  kGgmlQ5_0 = 6,
  kGgmlQ5_1 = 7,
  kGgmlQ8_0 = 8,
  kGgmlQ2_K = 10,
  kGgmlQ3_K = 11,
  kGgmlQ4_K = 12,
  kGgmlQ5_K = 13,
  kGgmlQ6_K = 14,
  kGgmlIQ4_NL = 20,
  kGgmlIQ4_XS = 23,
  kGgmlBF16 = 30,
};

struct GgmlTypeInfo {
  const char* name = nullptr;  // "F32", "Q4_K", ...
  int64_t block_elements = 0;  // elements per block (1 for plain types)
  int64_t block_bytes = 0;     // bytes per block
};

// The table entry of a ggml type id, or nullopt for an id ggml does not define (then the
// file cannot even be sized: a corrupt file).
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id);
// "Q4_K (12)" or "unknown type 77": for error messages.
std::string ggml_type_label(uint32_t id);

// The DType a ggml type is read as, or nullopt when anchorage does not support it.
std::optional<core::DType> dtype_of_ggml(uint32_t id);
uint32_t ggml_of_dtype(core::DType t);

}  // namespace anchorage::model::gguf

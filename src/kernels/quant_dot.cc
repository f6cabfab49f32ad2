// The integer-dot setting and the activation quantizer (kernels/quant_dot.h). Every ISA's
// kernels read the activations this one function writes; its loops (quant_act_impl.h) are built
// for each ISA and give the same bytes on all of them, so the quantization cannot differ.
#include "kernels/quant_dot.h"

#include <atomic>
#include <cstdlib>

#include "core/check.h"
#include "core/isa.h"
#include "kernels/quant_act_impl.h"

namespace anchorage::kernels {

namespace {

std::atomic<int>& setting() {
  static std::atomic<int> q = [] {
    QuantDot want = QuantDot::kInt8;
    const char* env = std::getenv("ANCHORAGE_QUANT_DOT");
    if (env) ANCHORAGE_CHECK_MSG(parse_quant_dot(env, &want), "ANCHORAGE_QUANT_DOT: f32 or int8");
    return int(want);
  }();
  return q;
}

int64_t round_up(int64_t v, int64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

QuantDot quant_dot() {
  return QuantDot(setting().load(std::memory_order_relaxed));
}

void set_quant_dot(QuantDot q) {
  setting().store(int(q), std::memory_order_relaxed);
}

std::string_view quant_dot_name(QuantDot q) {
  return q == QuantDot::kInt8 ? "int8" : "f32";
}

bool parse_quant_dot(std::string_view s, QuantDot* out) {
  if (s == "int8") {
    *out = QuantDot::kInt8;
  } else if (s == "f32") {
    *out = QuantDot::kF32;
  } else {
    return false;
  }
  return true;
}

bool int8_dot_type(core::DType t) {
  if (quant_dot() != QuantDot::kInt8) return false;
  return t == core::DType::kQ8_0 || t == core::DType::kQ4_K || t == core::DType::kQ6_K ||
         t == core::DType::kQ4_0 || t == core::DType::kIQ4_NL || t == core::DType::kQ5_K ||
         t == core::DType::kIQ4_XS || t == core::DType::kQ5_0 || t == core::DType::kQ4_1 ||
         t == core::DType::kQ5_1 || t == core::DType::kQ3_K || t == core::DType::kQ2_K;
}

ActFormat act_format(core::DType weight_type, int64_t K) {
  ActFormat f;
  // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL have 32-input weight blocks; the K-quants and
  // IQ4_XS 256-input ones.
  const bool k_quant = weight_type != core::DType::kQ8_0 && weight_type != core::DType::kQ4_0 &&
                       weight_type != core::DType::kIQ4_NL && weight_type != core::DType::kQ5_0 &&
                       weight_type != core::DType::kQ4_1 && weight_type != core::DType::kQ5_1;
  f.block = k_quant ? 256 : 32;
  f.sum_block = k_quant ? 16 : 32;
  ANCHORAGE_CHECK(K % f.block == 0);
  f.d_offset = round_up(K, 64);
  f.s_offset = f.d_offset + 4 * (K / f.block);
  f.row_bytes = round_up(f.s_offset + 4 * (K / f.sum_block), 64);
  return f;
}

void quantize_act_row(core::DType weight_type, const float* x, int64_t K, uint8_t* row) {
  const ActFormat f = act_format(weight_type, K);
  int8_t* q = reinterpret_cast<int8_t*>(row);
  float* d = reinterpret_cast<float*>(row + f.d_offset);
  int32_t* s = reinterpret_cast<int32_t*>(row + f.s_offset);
  // The same bytes on every path (quant_act_impl.h); the vector builds only run faster.
  switch (core::active_isa()) {
    case core::Isa::kAvx512:
      return quant_detail::quantize_row_avx512(x, K, f.block, f.sum_block, q, d, s);
    case core::Isa::kAvx2:
      return quant_detail::quantize_row_avx2(x, K, f.block, f.sum_block, q, d, s);
    case core::Isa::kScalar:
      break;
  }
  quant_detail::quantize_row_any(x, K, f.block, f.sum_block, q, d, s);
}

}  // namespace anchorage::kernels
